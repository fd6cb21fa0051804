#include "tessera/storage/codec.hpp"
