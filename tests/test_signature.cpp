// Tests for ExportGraphSignature (graph_signature.hpp): construction rules and derived views.
#include <catch2/catch.hpp>
#include <epgraph/program/graph_signature.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

// At file scope, like the same alias in other test files (a unity batch joins them; clang's
// -Wshadow refuses one in an anonymous namespace beside one at file scope).
using Strings = std::vector<std::string>;

namespace {
using namespace epgraph;  // NOLINT: test file

ExportGraphSignature sample() {
  ExportGraphSignature sig;
  sig.input_specs = {
      InputSpec(InputKind::TOKEN, TokenArgument{"token"}),
      InputSpec(InputKind::PARAMETER, TensorArgument{"p_w"}, "w"),
      InputSpec(InputKind::BUFFER, TensorArgument{"b_mean"}, "bn.mean", true),
      InputSpec(InputKind::BUFFER, TensorArgument{"b_mask"}, "mask", false),
      InputSpec(InputKind::CONSTANT_TENSOR, TensorArgument{"c_lifted_tensor_0"}, "lifted_tensor_0"),
      InputSpec(InputKind::CUSTOM_OBJ, CustomObjArgument{"obj", "__torch__.torch.classes.Foo"},
                "attr"),
      InputSpec(InputKind::USER_INPUT, TensorArgument{"x"}),
      InputSpec(InputKind::USER_INPUT, SymIntArgument{"s0"}),
      InputSpec(InputKind::USER_INPUT, ConstantArgument{"flag", true}),
  };
  sig.output_specs = {
      OutputSpec(OutputKind::TOKEN, TokenArgument{"token_out"}),
      OutputSpec(OutputKind::BUFFER_MUTATION, TensorArgument{"add_1"}, "bn.mean"),
      OutputSpec(OutputKind::PARAMETER_MUTATION, TensorArgument{"mul"}, "w"),
      OutputSpec(OutputKind::USER_INPUT_MUTATION, TensorArgument{"copy"}, "x"),
      OutputSpec(OutputKind::USER_OUTPUT, TensorArgument{"out"}),
      OutputSpec(OutputKind::USER_OUTPUT, ConstantArgument{"", std::int64_t{3}}),
      OutputSpec(OutputKind::USER_OUTPUT, ConstantArgument{"", None{}}),
  };
  return sig;
}
}  // namespace

TEST_CASE("derived views are computed from the two spec lists", "[signature]") {
  const ExportGraphSignature sig = sample();
  CHECK(sig.parameters() == Strings{"w"});
  CHECK(sig.buffers() == Strings{"bn.mean", "mask"});
  CHECK(sig.non_persistent_buffers() == Strings{"mask"});
  CHECK(sig.lifted_tensor_constants() == Strings{"lifted_tensor_0"});
  CHECK(sig.lifted_custom_objs() == Strings{"attr"});
  CHECK(sig.user_inputs() == std::vector<ConstantValue>{std::string("x"), std::string("s0"), true});
  CHECK(sig.user_outputs() ==
        std::vector<ConstantValue>{std::string("out"), std::int64_t{3}, None{}});
  CHECK(sig.inputs_to_parameters() == NameMap{{"p_w", "w"}});
  CHECK(sig.inputs_to_buffers() == NameMap{{"b_mean", "bn.mean"}, {"b_mask", "mask"}});
  CHECK(sig.inputs_to_lifted_tensor_constants() ==
        NameMap{{"c_lifted_tensor_0", "lifted_tensor_0"}});
  CHECK(sig.inputs_to_lifted_custom_objs() == NameMap{{"obj", "attr"}});
  CHECK(sig.buffers_to_mutate() == NameMap{{"add_1", "bn.mean"}});
  CHECK(sig.parameters_to_mutate() == NameMap{{"mul", "w"}});
  CHECK(sig.user_inputs_to_mutate() == NameMap{{"copy", "x"}});
  CHECK(sig.input_tokens() == Strings{"token"});
  CHECK(sig.output_tokens() == Strings{"token_out"});
}

TEST_CASE("replace_all_uses renames spec arguments, not targets", "[signature]") {
  ExportGraphSignature sig = sample();
  sig.replace_all_uses("x", "x_renamed");
  CHECK(sig.input_specs[6].name() == "x_renamed");
  CHECK(sig.output_specs[3].target() == std::optional<std::string>("x"));
  sig.replace_all_uses("add_1", "add_9");
  CHECK(sig.output_specs[1].name() == "add_9");
  CHECK(sig.output_specs[1].target() == std::optional<std::string>("bn.mean"));
}

TEST_CASE("InputSpec and OutputSpec refuse what torch refuses", "[signature][errors]") {
  CHECK_THROWS_AS(InputSpec(InputKind::BUFFER, TensorArgument{"b"}, "b"), value_error);
  CHECK_THROWS_WITH(InputSpec(InputKind::BUFFER, TensorArgument{"b"}, "b"),
                    "Failed to specify persistent flag on BUFFER.");
  CHECK_THROWS_WITH(InputSpec(InputKind::PARAMETER, TensorArgument{"p"}, "p", true),
                    "Input spec 'p' of kind PARAMETER cannot have a persistent flag");
  CHECK_THROWS_WITH(InputSpec(InputKind::PARAMETER, SymIntArgument{"s"}, "p"),
                    "Input spec 's' of kind PARAMETER needs a TensorArgument");
  CHECK_THROWS_WITH(InputSpec(InputKind::CONSTANT_TENSOR, TensorArgument{"c"}),
                    "Input spec 'c' of kind CONSTANT_TENSOR needs a target");
  CHECK_THROWS_WITH(InputSpec(InputKind::CUSTOM_OBJ, TensorArgument{"o"}, "o"),
                    "Input spec 'o' of kind CUSTOM_OBJ needs a CustomObjArgument");
  CHECK_THROWS_WITH(InputSpec(InputKind::TOKEN, TensorArgument{"t"}),
                    "Input spec 't' of kind TOKEN needs a TokenArgument");
  CHECK_THROWS_WITH(OutputSpec(OutputKind::BUFFER_MUTATION, TensorArgument{"a"}),
                    "Output spec 'a' of kind BUFFER_MUTATION needs a target");
  CHECK_THROWS_WITH(OutputSpec(OutputKind::USER_INPUT_MUTATION, ConstantArgument{"", None{}}, "x"),
                    "Output spec '' of kind USER_INPUT_MUTATION needs a TensorArgument");
  CHECK_THROWS_WITH(OutputSpec(OutputKind::TOKEN, TensorArgument{"t"}),
                    "Output spec 't' of kind TOKEN needs a TokenArgument");
  CHECK_NOTHROW(OutputSpec(OutputKind::USER_OUTPUT, ConstantArgument{"", None{}}));
  CHECK(kind_name(InputKind::CONSTANT_TENSOR) == "CONSTANT_TENSOR");
  CHECK(kind_name(OutputKind::GRADIENT_TO_USER_INPUT) == "GRADIENT_TO_USER_INPUT");
  CHECK(static_cast<int>(OutputKind::PARAMETER_MUTATION) == 4);  // torch's enum order
}

TEST_CASE("operator<< prints specs and signatures as torch does", "[signature][print]") {
  ExportGraphSignature sig;
  sig.input_specs = {InputSpec(InputKind::PARAMETER, TensorArgument{"p_w"}, "w"),
                     InputSpec(InputKind::BUFFER, TensorArgument{"b_m"}, "m", false),
                     InputSpec(InputKind::USER_INPUT, TensorArgument{"x"})};
  sig.output_specs = {OutputSpec(OutputKind::BUFFER_MUTATION, TensorArgument{"add"}, "m"),
                      OutputSpec(OutputKind::USER_OUTPUT, TensorArgument{"out"})};
  std::ostringstream os;
  os << sig;
  // print(ep.graph_signature): str() and a newline.
  CHECK(os.str() ==
        "\n# inputs\np_w: PARAMETER target='w'\nb_m: BUFFER target='m' persistent=False\n"
        "x: USER_INPUT\n\n# outputs\nadd: BUFFER_MUTATION target='m'\nout: USER_OUTPUT\n\n");
  std::ostringstream one;
  one << sig.input_specs[1] << '|' << sig.output_specs[0];
  CHECK(one.str() == "b_m: BUFFER target='m' persistent=False|add: BUFFER_MUTATION target='m'");
}
