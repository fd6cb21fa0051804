// evaluate_expression: the arrays it builds compute what the formula says, checked
// element by element against the same formula in plain C++ (double) arithmetic; dtypes
// follow numpy's weak-scalar rules; errors point at the offending column.
#include "tessera/api/expression.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "expression_parser.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/plan/internal/elementwise_table.hpp"
#include "test_seed.hpp"

namespace tessera {
namespace {

using Inputs = std::map<std::string, Array, std::less<>>;

Spec TestSpec() {
  Spec spec;
  spec.allowed_mem = 64 << 20;
  spec.max_workers = 2;
  return spec;
}

NDArray Compute(const Array& array) {
  ComputeOptions options;
  options.execute.progress = ProgressMode::kNever;
  return array.compute(options);
}

// Values of `dtype` as double, C order.
std::vector<double> Values(const NDArray& array) {
  std::vector<double> values;
  VisitDType(array.dtype(), [&]<class Tag>(Tag) {
    using T = typename Tag::type;
    for (const T value : array.data<T>()) {
      if constexpr (kIsComplex<T>) {
        values.push_back(static_cast<double>(value.real()));
      } else {
        values.push_back(static_cast<double>(value));
      }
    }
  });
  return values;
}

// (rows, columns) values from `generate(row, column)`, as float32.
template <class Generate>
NDArray Float32Matrix(Index rows, Index columns, Generate generate) {
  std::vector<float> values;
  for (Index row = 0; row < rows; ++row) {
    for (Index column = 0; column < columns; ++column) values.push_back(generate(row, column));
  }
  return NDArray::FromValues<float>({rows, columns}, values);
}

ExpressionError ErrorOf(std::string_view text, const Inputs& inputs) {
  try {
    evaluate_expression(text, inputs);
  } catch (const ExpressionError& error) {
    return error;
  }
  ADD_FAILURE() << "\"" << text << "\" evaluated";
  return ExpressionError(text, 1, "evaluated");
}

class ExpressionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 random(testing::TestSeed());
    std::uniform_real_distribution<float> kelvin(250.0f, 310.0f);
    std::uniform_real_distribution<float> percent(10.0f, 100.0f);
    t2_ = Float32Matrix(7, 9, [&](Index, Index) { return kelvin(random); });
    rh_ = Float32Matrix(7, 9, [&](Index, Index) { return percent(random); });
    inputs_.emplace("t2", asarray(t2_, {3, 4}, TestSpec()));
    inputs_.emplace("rh", asarray(rh_, {3, 4}, TestSpec()));
  }

  NDArray t2_;
  NDArray rh_;
  Inputs inputs_;
};

TEST_F(ExpressionTest, DewPointOnFloat32StaysFloat32AndMatchesTheFormula) {
  const ExpressionResult td = evaluate_expression(
      "td = ((1/273) - 0.0001844*log(0.611*exp(5423*((1/273)-(1/t2)))*rh/100/0.611))**-1", inputs_);
  EXPECT_EQ(td.name, "td");
  EXPECT_EQ(td.array.dtype(), float32);
  EXPECT_EQ(td.array.shape(), (Shape{7, 9}));
  EXPECT_EQ(td.array.chunks(), (Shape{3, 4}));
  const std::vector<double> computed = Values(Compute(td.array));
  const std::vector<double> t2 = Values(t2_);
  const std::vector<double> rh = Values(rh_);
  for (std::size_t index = 0; index < computed.size(); ++index) {
    const double e = 0.611 * std::exp(5423 * ((1.0 / 273) - (1 / t2[index])));
    const double expected = 1 / ((1.0 / 273) - 0.0001844 * std::log(e * rh[index] / 100 / 0.611));
    EXPECT_NEAR(computed[index], expected, 2e-5 * expected) << "element " << index;
  }
}

TEST_F(ExpressionTest, ArithmeticPrecedenceAndPowers) {
  const std::vector<double> t2 = Values(t2_);
  const std::vector<double> computed = Values(
      Compute(evaluate_expression("-(t2 / 100)**2 + 3 * (t2 / 100)**-1 - 2**3**2 // 7 % 5", inputs_)
                  .array));
  for (std::size_t index = 0; index < computed.size(); ++index) {
    const double x = t2[index] / 100;
    const double expected = -(x * x) + 3 / x - static_cast<double>((512 / 7) % 5);
    EXPECT_NEAR(computed[index], expected, 1e-5 * std::abs(expected) + 1e-5) << index;
  }
}

// Issue 14: numpy refuses integers to negative integer powers, even 1 and -1; x ** -1
// used to give 0 for every element. Refused when the graph is built (a constant power),
// or when it runs (an array of powers); a float base works and gives 1 / x.
TEST_F(ExpressionTest, IntegersToNegativeIntegerPowersAreRefused) {
  Inputs counts{{"n", asarray<std::int16_t>({1, -1, 2, 4}, {2}, TestSpec())},
                {"u", asarray<std::uint8_t>({1, 2, 3, 4}, {2}, TestSpec())},
                {"e", asarray<std::int16_t>({2, 0, -1, 1}, {2}, TestSpec())}};
  for (const char* text : {"n ** -1", "u ** -1", "pow(n, -2)", "n ** (1 - 3)"}) {
    SCOPED_TRACE(text);
    const ExpressionError error = ErrorOf(text, counts);
    const std::string reason = error.reason();
    EXPECT_NE(reason.find("Integers to negative integer powers are not allowed"), std::string::npos)
        << reason;
    EXPECT_NE(reason.find("cast to a float first, e.g. astype(x, float64) ** "), std::string::npos)
        << reason;
  }
  EXPECT_EQ(Values(Compute(evaluate_expression("astype(n, float64) ** -1", counts).array)),
            (std::vector<double>{1.0, -1.0, 0.5, 0.25}));
  EXPECT_EQ(Values(Compute(evaluate_expression("n ** -1.0", counts).array)),
            (std::vector<double>{1.0, -1.0, 0.5, 0.25}));
  EXPECT_EQ(Values(Compute(evaluate_expression("n ** 2", counts).array)),
            (std::vector<double>{1, 1, 4, 16}));
  // An array of powers with a negative element: the run fails (not retried), naming it.
  const Array powers = evaluate_expression("n ** e", counts).array;
  try {
    Compute(powers);
    ADD_FAILURE() << "n ** e computed";
  } catch (const InvalidArgument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("after 1 attempt: pow: Integers to negative integer powers are not "
                           "allowed (as numpy): an exponent of -1 was found"),
              std::string::npos)
        << message;
  }
  // The C++ API alike.
  const Array n = counts.at("n");
  EXPECT_THROW(pow(n, Scalar(-1)), InvalidArgument);
  EXPECT_THROW(pow(n, full({4}, Scalar(-1), int16, {2}, TestSpec())), InvalidArgument);
  EXPECT_EQ(Values(Compute(pow(n, Scalar(3)))), (std::vector<double>{1, -1, 8, 64}));
}

TEST_F(ExpressionTest, ScalarsAreWeakAndFoldedAsPython) {
  EXPECT_EQ(evaluate_expression("t2 * 2.5", inputs_).array.dtype(), float32);
  EXPECT_EQ(evaluate_expression("t2 * log(10)", inputs_).array.dtype(), float32);
  EXPECT_EQ(evaluate_expression("t2 > 300", inputs_).array.dtype(), bool_);
  Inputs counts{{"n", asarray<std::int16_t>({1, 2, 3, 4}, {2}, TestSpec())}};
  EXPECT_EQ(evaluate_expression("n + 1", counts).array.dtype(), int16);
  EXPECT_EQ(evaluate_expression("n * 0.5", counts).array.dtype(), float64);
  EXPECT_EQ(evaluate_expression("n / 2", counts).array.dtype(), float64);
  EXPECT_EQ(evaluate_expression("astype(n, float32) * 0.5", counts).array.dtype(), float32);
  EXPECT_EQ(Values(Compute(evaluate_expression("n * (7 // 2) + 2**10 - 10 % 3", counts).array)),
            (std::vector<double>{1026, 1029, 1032, 1035}));
  EXPECT_EQ(Values(Compute(evaluate_expression("-n // 3 + (-7) % 3", counts).array)),
            (std::vector<double>{1, 1, 1, 0}));  // floor division as numpy, Python's modulo
  // Inputs win over constants of the same name; the constants otherwise.
  Inputs vapour{{"e", asarray<double>({1, 2}, {2}, TestSpec())}};
  EXPECT_EQ(Values(Compute(evaluate_expression("e * 2 + pi - pi", vapour).array)),
            (std::vector<double>{2, 4}));
  const std::vector<double> constants =
      Values(Compute(evaluate_expression("n * 0 + e + isinf(inf) + isnan(nan)", counts).array));
  EXPECT_NEAR(constants[0], std::exp(1.0) + 2, 1e-12);
}

TEST_F(ExpressionTest, ReductionsWithAxisMatchHandLoops) {
  const std::vector<double> t2 = Values(t2_);
  const auto at = [&](Index row, Index column) {
    return t2[static_cast<std::size_t>(row * 9 + column)];
  };

  const Array sum0 = evaluate_expression("sum(t2, axis=0)", inputs_).array;
  EXPECT_EQ(sum0.shape(), (Shape{9}));
  const std::vector<double> sums = Values(Compute(sum0));
  for (Index column = 0; column < 9; ++column) {
    double expected = 0;
    for (Index row = 0; row < 7; ++row) expected += at(row, column);
    EXPECT_NEAR(sums[static_cast<std::size_t>(column)], expected, 1e-5 * expected);
  }

  const Array means = evaluate_expression("mean(t2, -1, keepdims=True)", inputs_).array;
  EXPECT_EQ(means.shape(), (Shape{7, 1}));
  const std::vector<double> row_means = Values(Compute(means));
  for (Index row = 0; row < 7; ++row) {
    double expected = 0;
    for (Index column = 0; column < 9; ++column) expected += at(row, column) / 9;
    EXPECT_NEAR(row_means[static_cast<std::size_t>(row)], expected, 1e-5 * expected);
  }

  const std::vector<double> variances =
      Values(Compute(evaluate_expression("var(t2, axis=0, correction=1)", inputs_).array));
  for (Index column = 0; column < 9; ++column) {
    double mean = 0;
    for (Index row = 0; row < 7; ++row) mean += at(row, column) / 7;
    double squares = 0;
    for (Index row = 0; row < 7; ++row)
      squares += (at(row, column) - mean) * (at(row, column) - mean);
    EXPECT_NEAR(variances[static_cast<std::size_t>(column)], squares / 6,
                1e-3 * squares / 6 + 1e-3);
  }

  double largest = -1;
  double smallest = 1e9;
  for (const double value : t2) {
    largest = std::max(largest, value);
    smallest = std::min(smallest, value);
  }
  EXPECT_EQ(Values(Compute(evaluate_expression("max(t2, (0, 1)) - min(t2)", inputs_).array)),
            (std::vector<double>{
                static_cast<double>(static_cast<float>(largest) - static_cast<float>(smallest))}));

  const std::vector<double> argmax =
      Values(Compute(evaluate_expression("argmax(t2, axis=1)", inputs_).array));
  for (Index row = 0; row < 7; ++row) {
    Index best = 0;
    for (Index column = 1; column < 9; ++column) {
      if (at(row, column) > at(row, best)) best = column;
    }
    EXPECT_EQ(argmax[static_cast<std::size_t>(row)], static_cast<double>(best)) << row;
  }
  const std::vector<double> hot =
      Values(Compute(evaluate_expression("count_nonzero(t2 > 280, axis=None)", inputs_).array));
  double expected_hot = 0;
  for (const double value : t2) expected_hot += value > 280 ? 1 : 0;
  EXPECT_EQ(hot, (std::vector<double>{expected_hot}));
}

TEST_F(ExpressionTest, WhereTakesArraysAndNumbers) {
  const std::vector<double> t2 = Values(t2_);
  const std::vector<double> rh = Values(rh_);
  const Array clipped = evaluate_expression("where(t2 > 280, t2 - 273.15, nan)", inputs_).array;
  EXPECT_EQ(clipped.dtype(), float32);
  const std::vector<double> values = Values(Compute(clipped));
  const Array flags = evaluate_expression("where((rh > 50) & ~(t2 < 260), 1, 0.5)", inputs_).array;
  EXPECT_EQ(flags.dtype(), float64);
  const std::vector<double> flag_values = Values(Compute(flags));
  const std::vector<double> mixed =
      Values(Compute(evaluate_expression("where(t2 > 280, t2, rh)", inputs_).array));
  for (std::size_t index = 0; index < values.size(); ++index) {
    if (t2[index] > 280) {
      EXPECT_NEAR(values[index], static_cast<float>(t2[index]) - 273.15f, 1e-4);
    } else {
      EXPECT_TRUE(std::isnan(values[index]));
    }
    EXPECT_EQ(flag_values[index], rh[index] > 50 && !(t2[index] < 260) ? 1.0 : 0.5);
    EXPECT_EQ(mixed[index], t2[index] > 280 ? t2[index] : rh[index]);
  }
  EXPECT_EQ(Values(Compute(evaluate_expression("where(False, 0, t2)", inputs_).array)), t2);
}

// Every function of the table builds and computes what numpy gives for f = [0.25, 0.5]
// and i = [1, 2] (hand-computed; f(f, f) for binary functions, f(i, i) for bitwise ones):
// its name is the one tessera's kernels know, and the kernel is the right one.
// The inputs of the tests of every function: f (float64) and i (int32, for the bitwise
// functions), and numpy's values of each function on them: f(x) or f(x, x), with x = f
// or i (kFunctionValueA and kFunctionValueB are f's elements).
Inputs FunctionTestInputs() {
  return {{"f", asarray<double>({0.25, 0.5}, {1}, TestSpec())},
          {"i", asarray<std::int32_t>({1, 2}, {1}, TestSpec())}};
}
constexpr double kFunctionValueA = 0.25;
constexpr double kFunctionValueB = 0.5;
using ExpectedValues = std::map<std::string, std::vector<double>, std::less<>>;
ExpectedValues NumpyValuesOfEveryFunction() {
  const double a = kFunctionValueA;
  const double b = kFunctionValueB;
  const auto both = [&](double (*fn)(double)) { return std::vector<double>{fn(a), fn(b)}; };
  return {{"negative", {-a, -b}},
          {"positive", {a, b}},
          {"abs", {a, b}},
          {"sign", {1, 1}},
          {"square", {a * a, b * b}},
          {"sqrt", both(std::sqrt)},
          {"exp", both(std::exp)},
          {"expm1", both(std::expm1)},
          {"log", both(std::log)},
          {"log1p", both(std::log1p)},
          {"log2", both(std::log2)},
          {"log10", both(std::log10)},
          {"sin", both(std::sin)},
          {"cos", both(std::cos)},
          {"tan", both(std::tan)},
          {"asin", both(std::asin)},
          {"acos", both(std::acos)},
          {"atan", both(std::atan)},
          {"sinh", both(std::sinh)},
          {"cosh", both(std::cosh)},
          {"tanh", both(std::tanh)},
          {"asinh", both(std::asinh)},
          // numpy: arccosh of values below 1 is NaN; compared as NaN below
          {"acosh", {std::nan(""), std::nan("")}},
          {"atanh", both(std::atanh)},
          {"floor", {0, 0}},
          {"ceil", {1, 1}},
          {"trunc", {0, 0}},
          {"round", {0, 0}},
          {"isnan", {0, 0}},
          {"isinf", {0, 0}},
          {"isfinite", {1, 1}},
          {"logical_not", {0, 0}},
          {"bitwise_invert", {-2, -3}},
          {"real", {a, b}},
          {"imag", {0, 0}},
          {"conj", {a, b}},
          {"add", {2 * a, 2 * b}},
          {"subtract", {0, 0}},
          {"multiply", {a * a, b * b}},
          {"divide", {1, 1}},
          {"floor_divide", {1, 1}},
          {"remainder", {0, 0}},
          {"pow", {std::pow(a, a), std::pow(b, b)}},
          {"maximum", {a, b}},
          {"minimum", {a, b}},
          {"atan2", {std::atan2(a, a), std::atan2(b, b)}},
          {"hypot", {std::hypot(a, a), std::hypot(b, b)}},
          {"logaddexp", {a + std::log(2.0), b + std::log(2.0)}},
          {"copysign", {a, b}},
          {"equal", {1, 1}},
          {"not_equal", {0, 0}},
          {"less", {0, 0}},
          {"less_equal", {1, 1}},
          {"greater", {0, 0}},
          {"greater_equal", {1, 1}},
          {"logical_and", {1, 1}},
          {"logical_or", {1, 1}},
          {"logical_xor", {0, 0}},
          {"bitwise_and", {1, 2}},
          {"bitwise_or", {1, 2}},
          {"bitwise_xor", {0, 0}},
          {"bitwise_left_shift", {1 << 1, 2 << 2}},
          {"bitwise_right_shift", {0, 0}},
          {"where", {1, b}},  // where(f > 0.3, f, i): i[0], f[1]
          {"astype", {0, 0}},
          {"sum", {a + b}},
          {"prod", {a * b}},
          {"mean", {(a + b) / 2}},
          {"var", {0.015625}},
          {"std", {0.125}},
          {"min", {a}},
          {"max", {b}},
          {"all", {1}},
          {"any", {1}},
          {"count_nonzero", {2}},
          {"argmin", {0}},
          {"argmax", {1}}};
}

// Values equal to `want`: within 1e-12 relative, NaN where NaN.
void ExpectValues(const std::vector<double>& values, const std::vector<double>& want) {
  ASSERT_EQ(values.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    if (std::isnan(want[k])) {
      EXPECT_TRUE(std::isnan(values[k])) << "element " << k << " is " << values[k];
    } else {
      EXPECT_NEAR(values[k], want[k], 1e-12 * std::max(1.0, std::abs(want[k]))) << "element " << k;
    }
  }
}

TEST_F(ExpressionTest, EveryFunctionOfTheTableComputesWhatNumpyGives) {
  Inputs inputs = FunctionTestInputs();
  const ExpectedValues expected = NumpyValuesOfEveryFunction();
  for (const std::string_view name : expression::FunctionNames()) {
    const expression::FunctionInfo& info = *expression::FindFunction(name);
    const kernels::ElementwiseOp* op = kernels::FindElementwiseOp(name);
    const bool integers = op != nullptr && !kernels::TakesFloats(op->rule);
    const std::string x = integers ? "i" : "f";
    std::string call = std::string(name) + "(" + x;
    switch (info.kind) {
      case expression::FunctionKind::kUnary:
        break;
      case expression::FunctionKind::kBinary:
        call += ", " + x;
        break;
      case expression::FunctionKind::kWhere:
        call = "where(f > 0.3, f, i";
        break;
      case expression::FunctionKind::kAsType:
        call += ", int8";
        break;
      case expression::FunctionKind::kReduction:
      case expression::FunctionKind::kArgReduction:
        call += ", axis=0, keepdims=True";
        break;
    }
    call += ")";
    SCOPED_TRACE(call);
    const auto found = expected.find(std::string(info.name));  // aliases: the canonical entry
    ASSERT_NE(found, expected.end()) << "no expected value for " << name << ": add one";
    const Array result = evaluate_expression(call, inputs).array;
    const bool reduces = info.kind == expression::FunctionKind::kReduction ||
                         info.kind == expression::FunctionKind::kArgReduction;
    EXPECT_EQ(result.shape(), reduces ? Shape{1} : Shape{2});
    if (info.kind == expression::FunctionKind::kAsType) {
      EXPECT_EQ(result.dtype(), int8);
    }
    const std::vector<double> values = Values(Compute(result));
    ExpectValues(values, found->second);
  }
}

// The C++ functions of each row of elementwise_ops.def, by name: f(x) for a unary op,
// f(x, x) for a binary one, and its overloads with a scalar second or first.
struct ApiFunction {
  Array (*arrays)(const Array& x);
  Array (*scalar_second)(const Array& x, const Scalar& y) = nullptr;
  Array (*scalar_first)(const Scalar& x, const Array& y) = nullptr;
};
const std::map<std::string_view, ApiFunction>& ApiFunctions() {
  // clang-format off
  static const std::map<std::string_view, ApiFunction> functions{
#define TESSERA_UNARY_OP(name, Kernel, aliases, rule, complex, doc) \
    {#name, {[](const Array& x) { return tessera::name(x); }}},
#define TESSERA_BINARY_OP(name, Kernel, aliases, rule, complex, doc)                    \
    {#name, {[](const Array& x) { return tessera::name(x, x); },          \
             [](const Array& x, const Scalar& y) { return tessera::name(x, y); }, \
             [](const Scalar& x, const Array& y) { return tessera::name(x, y); }}},
#include "tessera/plan/internal/elementwise_ops.def"
  };
  // clang-format on
  return functions;
}

// Walks the table of elementwise ops: each row is a C++ function (all its overloads) and
// a calculator function by its name and by each alias, computed by the row's kernel,
// giving numpy's values and a dtype its type rule allows; calls on scalars alone (folded
// before any array is built) give the same.
TEST_F(ExpressionTest, EveryRowOfTheElementwiseTableComputesWhatNumpyGivesEverywhere) {
  const Inputs inputs = FunctionTestInputs();
  const ExpectedValues expected = NumpyValuesOfEveryFunction();
  for (const kernels::ElementwiseOp& op : kernels::ElementwiseOps()) {
    SCOPED_TRACE(op.name);
    const auto found = expected.find(op.name);
    ASSERT_NE(found, expected.end()) << "no expected value for " << op.name << ": add one";
    const std::vector<double>& want = found->second;
    const bool integers = !kernels::TakesFloats(op.rule);
    const std::string x = integers ? "i" : "f";
    const Array& operand = inputs.at(x);
    // x's second element, as a scalar.
    const Scalar second = integers ? Scalar(std::int64_t{2}) : Scalar(kFunctionValueB);
    const std::string second_text = integers ? "2" : "0.5";

    const auto api = ApiFunctions().find(op.name);
    ASSERT_NE(api, ApiFunctions().end());
    const Array result = api->second.arrays(operand);
    ExpectValues(Values(Compute(result)), want);
    EXPECT_EQ(result.dtype() == bool_, kernels::GivesBool(op.rule)) << result.dtype().name();
    if (kernels::GivesFloat(op.rule)) {
      EXPECT_TRUE(result.dtype() == float32 || result.dtype() == float64);
    }
    if (op.arity == 2) {
      ExpectValues({Values(Compute(api->second.scalar_second(operand, second)))[1]}, {want[1]});
      ExpectValues({Values(Compute(api->second.scalar_first(second, operand)))[1]}, {want[1]});
    }

    std::vector<std::string_view> names{op.name};
    kernels::ForEachAlias(op, [&](std::string_view alias) { names.push_back(alias); });
    for (const std::string_view name : names) {
      const std::string call =
          std::string(name) + (op.arity == 1 ? "(" + x + ")" : "(" + x + ", " + x + ")");
      SCOPED_TRACE(call);
      ExpectValues(Values(Compute(evaluate_expression(call, inputs).array)), want);
      const std::string folded =
          std::string(name) +
          (op.arity == 1 ? "(" + second_text + ")" : "(" + second_text + ", " + second_text + ")") +
          " + 0 * " + x;
      SCOPED_TRACE(folded);
      const std::vector<double> values = Values(Compute(evaluate_expression(folded, inputs).array));
      ExpectValues({values[1]}, {want[1]});
    }
  }
}

TEST_F(ExpressionTest, ErrorsPointAtTheColumn) {
  struct Bad {
    std::string_view text;
    int column;
    std::string_view reason_part;
  };
  Inputs inputs = inputs_;
  inputs.emplace("short", asarray<float>({1, 2, 3}, {3}, TestSpec()));
  const Bad cases[] = {
      {"td = 1 / tt2", 10, "unknown name \"tt2\"; did you mean \"t2\"? (inputs: rh, short, t2)"},
      {"t2 + short", 4, "'+': "},
      {"1 / 273 * 2", 1, "uses no input array"},
      {"log(2)", 1, "uses no input array"},
      {"t2 + log", 6, "\"log\" is a function"},
      {"t2 + 7 // 0", 8, "division or modulo by zero"},
      {"t2 * 2**64", 7, "overflows 64 bits"},
      {"t2 & 1", 4, "'&'"},
      {"sum(3)", 5, "sum() needs an array here"},
      {"sum(t2, axis=1.5)", 14, "axis must be an integer"},
      {"max(t2, rh)", 9, "maximum(x, y)"},
      {"sum(t2, axis=(0, 1.0))", 18, "axis must be an integer"},
      {"mean(t2, 2)", 1, "mean(): "},
      {"argmax(t2, axis=(0, 1))", 17, "argmax() takes one axis"},
      {"y = (2 + 3) * 4", 6, "uses no input array"},
      {"astype(t2, float33)", 12, "expected a dtype name"},
      {"t2 + None", 6, "None is only allowed"},
      {"t2 + (1, 2)", 6, "a tuple is only allowed"},
      {"sum(t2, keepdims=0.5)", 18, "keepdims must be True or False"},
  };
  for (const Bad& bad : cases) {
    const ExpressionError error = ErrorOf(bad.text, inputs);
    EXPECT_EQ(error.column(), bad.column) << bad.text << ": " << error.what();
    EXPECT_NE(error.reason().find(bad.reason_part), std::string::npos)
        << bad.text << ": " << error.reason();
  }
  EXPECT_THROW(evaluate_expression("x", {{"2x", inputs_.at("t2")}}), InvalidArgument);
  EXPECT_THROW(evaluate_expression("x", {{"not", inputs_.at("t2")}}), InvalidArgument);
}

}  // namespace
}  // namespace tessera
