// Golden tests for torch.fx's printed form (print.hpp). The expected texts are what
// `print(ep.graph)` / `print(ep.graph_signature)` printed in torch 2.13 for the same programs.
#include <catch2/catch.hpp>
#include <epgraph/ir/print.hpp>
#include <epgraph/program/graph_signature.hpp>
#include <limits>
#include <sstream>
#include <string>

namespace {
using epgraph::Argument;
using epgraph::ArgumentList;
using epgraph::Graph;
using epgraph::Node;
}  // namespace

TEST_CASE("a Linear + BatchNorm program prints exactly like torch.export's graph", "[print]") {
  // class M(nn.Module): linear(3,3) -> bn(3) ; return y + 1.5, x.sum(dim=[0], keepdim=True)
  Graph g;
  Node* w = g.placeholder("p_linear_weight");
  Node* b = g.placeholder("p_linear_bias");
  Node* bw = g.placeholder("p_bn_weight");
  Node* bb = g.placeholder("p_bn_bias");
  Node* rm = g.placeholder("b_bn_running_mean");
  Node* rv = g.placeholder("b_bn_running_var");
  Node* nbt = g.placeholder("b_bn_num_batches_tracked");
  Node* x = g.placeholder("x");
  Node* linear = g.call_function("torch.ops.aten.linear.default", {x, w, b});
  g.call_function("torch.ops.aten.add_.Tensor", {nbt, 1});
  Node* bn = g.call_function("torch.ops.aten.batch_norm.default",
                             {linear, bw, bb, rm, rv, true, 0.1, 1e-05, false});
  Node* add = g.call_function("torch.ops.aten.add.Tensor", {bn, 1.5});
  Node* sum = g.call_function("torch.ops.aten.sum.dim_IntList", {x, ArgumentList{0}, true});
  g.output({add, sum});
  const std::string expected =
      "graph():\n"
      "    %p_linear_weight : [num_users=1] = placeholder[target=p_linear_weight]\n"
      "    %p_linear_bias : [num_users=1] = placeholder[target=p_linear_bias]\n"
      "    %p_bn_weight : [num_users=1] = placeholder[target=p_bn_weight]\n"
      "    %p_bn_bias : [num_users=1] = placeholder[target=p_bn_bias]\n"
      "    %b_bn_running_mean : [num_users=1] = placeholder[target=b_bn_running_mean]\n"
      "    %b_bn_running_var : [num_users=1] = placeholder[target=b_bn_running_var]\n"
      "    %b_bn_num_batches_tracked : [num_users=1] = "
      "placeholder[target=b_bn_num_batches_tracked]\n"
      "    %x : [num_users=2] = placeholder[target=x]\n"
      "    %linear : [num_users=1] = call_function[target=torch.ops.aten.linear.default](args = "
      "(%x, %p_linear_weight, %p_linear_bias), kwargs = {})\n"
      "    %add_ : [num_users=0] = call_function[target=torch.ops.aten.add_.Tensor](args = "
      "(%b_bn_num_batches_tracked, 1), kwargs = {})\n"
      "    %batch_norm : [num_users=1] = call_function[target=torch.ops.aten.batch_norm.default]"
      "(args = (%linear, %p_bn_weight, %p_bn_bias, %b_bn_running_mean, %b_bn_running_var, True, "
      "0.1, 1e-05, False), kwargs = {})\n"
      "    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = "
      "(%batch_norm, 1.5), kwargs = {})\n"
      "    %sum_1 : [num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = "
      "(%x, [0], True), kwargs = {})\n"
      "    return (add, sum_1)";
  CHECK(epgraph::to_string(g) == expected);
  std::ostringstream os;
  os << g;
  CHECK(os.str() == expected + "\n");
  g.lint();
}

TEST_CASE("the signature prints like torch's ExportGraphSignature", "[print][signature]") {
  using epgraph::InputKind;
  using epgraph::InputSpec;
  using epgraph::OutputKind;
  using epgraph::OutputSpec;
  using epgraph::TensorArgument;
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {
      InputSpec(InputKind::PARAMETER, TensorArgument{"p_linear_weight"}, "linear.weight"),
      InputSpec(InputKind::BUFFER, TensorArgument{"b_bn_running_mean"}, "bn.running_mean", true),
      InputSpec(InputKind::BUFFER, TensorArgument{"b_mask"}, "mask", false),
      InputSpec(InputKind::USER_INPUT, TensorArgument{"x"}),
  };
  sig.output_specs = {
      OutputSpec(OutputKind::BUFFER_MUTATION, TensorArgument{"add_2"}, "bn.running_mean"),
      OutputSpec(OutputKind::USER_OUTPUT, TensorArgument{"add_1"}),
  };
  CHECK(epgraph::to_string(sig) ==
        "\n# inputs\n"
        "p_linear_weight: PARAMETER target='linear.weight'\n"
        "b_bn_running_mean: BUFFER target='bn.running_mean' persistent=True\n"
        "b_mask: BUFFER target='mask' persistent=False\n"
        "x: USER_INPUT\n"
        "\n# outputs\n"
        "add_2: BUFFER_MUTATION target='bn.running_mean'\n"
        "add_1: USER_OUTPUT\n");
}

TEST_CASE("arguments print like FX's _format_arg and outputs like Python's repr", "[print]") {
  Graph g;
  Node* x = g.placeholder("x");
  g.set_schema_checks(false);  // kwargs of every kind, not a real call of this operator
  Node* n = g.call_function("torch.ops.aten.to.dtype_layout", {x},
                            {{"dtype", epgraph::dtype::float16},
                             {"layout", epgraph::Layout::Strided},
                             {"device", epgraph::Device{"cuda", 0}},
                             {"memory_format", epgraph::MemoryFormat::ContiguousFormat},
                             {"mode", "floor"},
                             {"pad", epgraph::none},
                             {"scale", 2.0},
                             {"ids", ArgumentList{1, -2, ArgumentList{}}}});
  Node* out = g.output({n, "text", epgraph::none, 3, epgraph::Device{"cpu", {}}});
  CHECK(epgraph::format_node(*n) ==
        "%to : [num_users=1] = call_function[target=torch.ops.aten.to.dtype_layout](args = (%x,), "
        "kwargs = {dtype: torch.float16, layout: torch.strided, device: cuda:0, memory_format: "
        "torch.contiguous_format, mode: floor, pad: None, scale: 2.0, ids: [1, -2, []]})");
  CHECK(epgraph::format_node(*out) == "return (to, 'text', None, 3, device(type='cpu'))");
  Node* attr = g.get_attr("const.w");
  (void)attr;
  Graph h;
  Node* p = h.placeholder("p");
  p->set_args({7});
  CHECK(epgraph::format_node(*p) == "%p : [num_users=0] = placeholder[target=p](default=7)");
  h.output({});
  CHECK(epgraph::format_node(*h.output_node()) == "return ()");
}

TEST_CASE("python_float_repr matches CPython's repr(float)", "[print]") {
  CHECK(epgraph::python_float_repr(1.0) == "1.0");
  CHECK(epgraph::python_float_repr(0.1) == "0.1");
  CHECK(epgraph::python_float_repr(1e-05) == "1e-05");
  CHECK(epgraph::python_float_repr(0.0001) == "0.0001");
  CHECK(epgraph::python_float_repr(1e16) == "1e+16");
  CHECK(epgraph::python_float_repr(1e15) == "1000000000000000.0");
  CHECK(epgraph::python_float_repr(123456.789) == "123456.789");
  CHECK(epgraph::python_float_repr(-2.5) == "-2.5");
  CHECK(epgraph::python_float_repr(-0.0) == "-0.0");
  CHECK(epgraph::python_float_repr(1.7976931348623157e308) == "1.7976931348623157e+308");
  CHECK(epgraph::python_float_repr(5e-324) == "5e-324");
  CHECK(epgraph::python_float_repr(1.0 / 3.0) == "0.3333333333333333");
  CHECK(epgraph::python_float_repr(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(epgraph::python_float_repr(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(epgraph::python_str_repr("it's") == "\"it's\"");
  CHECK(epgraph::python_str_repr("a'b\"c\n") == "'a\\'b\"c\\n'");
}
