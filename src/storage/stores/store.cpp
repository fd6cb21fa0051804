#include "tessera/storage/store.hpp"
