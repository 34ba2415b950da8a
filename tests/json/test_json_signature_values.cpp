// Saving programs built in C++ whose placeholders carry no metadata but whose signature types
// them: TOKEN inputs/outputs are written as torch's token tensor (torch.tensor([])), CUSTOM_OBJ
// inputs as `as_custom_obj` with a custom_obj_values entry (torch's handle_placeholder); a
// with_effects node read through getitem nodes is written as a tuple. Each program is saved,
// checked field by field, loaded back and compared (printed graph and signature).
// Regression for tests/fuzz/regressions/fuzz_edits/empty_input_token_and_custom_obj_round_trip.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/json/json.hpp>
#include <epgraph/program/verify.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "../support/program_builders.hpp"

namespace {

using epgraph_test::Program;
using ojson_t = nlohmann::ordered_json;

const ojson_t token_meta = {{"dtype", 7},
                            {"sizes", ojson_t::array({{{"as_int", 0}}})},
                            {"requires_grad", false},
                            {"device", {{"type", "cpu"}, {"index", nullptr}}},
                            {"strides", ojson_t::array({{{"as_int", 1}}})},
                            {"storage_offset", {{"as_int", 0}}},
                            {"layout", 7}};

// Saves `ep`, loads the text back, and checks that the reloaded program prints like `ep` and
// saves to the same text. Returns the saved document.
ojson_t round_trip(const Program& ep) {
  const std::string text = epgraph::json::save_exported_program_to_string(ep);
  const Program back = epgraph::json::load_exported_program_from_string(text);
  CHECK(epgraph::to_string(back.graph()) == epgraph::to_string(ep.graph()));
  CHECK(epgraph::to_string(back.graph_signature()) == epgraph::to_string(ep.graph_signature()));
  CHECK(epgraph::json::save_exported_program_to_string(back) == text);
  return ojson_t::parse(text);
}

}  // namespace

TEST_CASE("save: token input and output without metadata", "[json][token]") {
  // [token: TOKEN, x: USER_INPUT]; with_effects(token, mylib.record.default, x); getitem 0 ->
  // output TOKEN. Neither `token` nor `getitem` nor `with_effects` has NodeMeta::val.
  const Program ep = epgraph_test::token_program(false);
  const ojson_t doc = round_trip(ep);
  const ojson_t& g = doc["graph_module"]["graph"];
  CHECK(g["inputs"] ==
        ojson_t::array({{{"as_tensor", {{"name", "token"}}}}, {{"as_tensor", {{"name", "x"}}}}}));
  CHECK(g["outputs"] == ojson_t::array({{{"as_tensor", {{"name", "getitem"}}}}}));
  REQUIRE(g["nodes"].size() == 1);
  const ojson_t& effects = g["nodes"][0];
  CHECK(effects["target"] == "torch.ops.higher_order.with_effects");
  CHECK(effects["name"] == "with_effects");
  // A tuple of one (the token), as torch writes a higher-order operator's tuple result.
  CHECK(effects["outputs"] == ojson_t::array({{{"as_tensor", {{"name", "getitem"}}}}}));
  CHECK(effects["is_hop_single_tensor_return"] == false);
  CHECK(g["tensor_values"]["token"] == token_meta);
  CHECK(g["tensor_values"]["getitem"] == token_meta);
  CHECK(g["tensor_values"].size() == 3);  // token, x, getitem
  CHECK(g["custom_obj_values"] == ojson_t::object());
  CHECK(
      doc["graph_module"]["signature"] ==
      ojson_t({{"input_specs",
                ojson_t::array({{{"token", {{"arg", {{"name", "token"}}}}}},
                                {{"user_input", {{"arg", {{"as_tensor", {{"name", "x"}}}}}}}}})},
               {"output_specs", ojson_t::array({{{"token", {{"arg", {{"name", "getitem"}}}}}}})}}));

  // Loaded back, the token values carry the token tensor's metadata.
  const Program back = epgraph::json::load_exported_program_from_string(
      epgraph::json::save_exported_program_to_string(ep));
  for (const char* name : {"token", "getitem"}) {
    INFO(name);
    const epgraph::Node* n = back.graph().find_node(name);
    REQUIRE(n != nullptr);
    REQUIRE(n->meta().val.tensor());
    CHECK(n->meta().val.tensor()->dtype == epgraph::dtype::float32);
    CHECK(n->meta().val.tensor()->sizes == std::vector<epgraph::SymInt>{std::int64_t{0}});
    CHECK(n->meta().val.tensor()->strides == std::vector<epgraph::SymInt>{std::int64_t{1}});
  }
  CHECK(epgraph::to_string(back.graph()) ==
        "graph():\n"
        "    %token : [num_users=1] = placeholder[target=token]\n"
        "    %x : [num_users=1] = placeholder[target=x]\n"
        "    %with_effects : [num_users=1] = call_function[target=torch.ops.higher_order."
        "with_effects](args = (%token, torch.ops.mylib.record.default, %x), kwargs = {})\n"
        "    %getitem : [num_users=1] = call_function[target=operator.getitem](args = "
        "(%with_effects, 0), kwargs = {})\n"
        "    return (getitem,)");
}

TEST_CASE("save: a token with metadata keeps it, other tuple items need theirs", "[json][token]") {
  Program ep = epgraph_test::token_program(true);  // getitem_1 -> USER_OUTPUT
  // getitem_1 is a user output, not a token: its metadata cannot be made up.
  CHECK_THROWS_AS(epgraph::json::save_exported_program_to_string(ep),
                  epgraph::json::serialization_error);
  CHECK_THROWS_WITH(epgraph::json::save_exported_program_to_string(ep),
                    "graph_module.graph.tensor_values: node 'getitem_1' produces a tensor but has "
                    "no tensor metadata (NodeMeta::val); set it before saving");
  ep.graph().find_node("getitem_1")->mutable_meta().val = ep.graph().find_node("x")->meta().val;
  // A token given other metadata is written with it.
  epgraph::TensorMeta scalar;
  scalar.dtype = epgraph::dtype::int64;
  ep.graph().find_node("token")->mutable_meta().val = scalar;
  const ojson_t doc = round_trip(ep);
  const ojson_t& g = doc["graph_module"]["graph"];
  CHECK(g["nodes"][0]["outputs"] == ojson_t::array({{{"as_tensor", {{"name", "getitem"}}}},
                                                    {{"as_tensor", {{"name", "getitem_1"}}}}}));
  CHECK(g["nodes"][0]["is_hop_single_tensor_return"] == false);
  CHECK(g["tensor_values"]["token"]["dtype"] == 5);  // LONG (int64), as set
  CHECK(g["tensor_values"]["token"]["sizes"] == ojson_t::array());
  CHECK(g["tensor_values"]["getitem"] == token_meta);
  CHECK(g["outputs"] == ojson_t::array({{{"as_tensor", {{"name", "getitem"}}}},
                                        {{"as_tensor", {{"name", "getitem_1"}}}}}));
}

TEST_CASE("save: custom object input without metadata", "[json][custom_obj]") {
  const Program ep = epgraph_test::with_tensor_meta(epgraph_test::constants_program());
  REQUIRE_FALSE(ep.graph().find_node("obj")->meta().val.has_value());
  const ojson_t doc = round_trip(ep);
  const ojson_t& g = doc["graph_module"]["graph"];
  const ojson_t obj = {{"name", "obj"}, {"class_fqn", epgraph_test::custom_class}};
  CHECK(g["inputs"][4] == ojson_t({{"as_custom_obj", obj}}));
  CHECK(g["inputs"].size() == 6);
  CHECK(g["custom_obj_values"] == ojson_t({{"obj", obj}}));
  CHECK_FALSE(g["tensor_values"].contains("obj"));
  // call_torchbind(obj, 'add_tensor', add_3): the object argument is typed too.
  const ojson_t& call = g["nodes"][4];
  CHECK(call["target"] == "torch.ops.higher_order.call_torchbind");
  CHECK(call["inputs"][0]["arg"] == ojson_t({{"as_custom_obj", obj}}));
  CHECK(call["inputs"][1]["arg"] == ojson_t({{"as_string", "add_tensor"}}));
  CHECK(doc["graph_module"]["signature"]["input_specs"][4] ==
        ojson_t({{"custom_obj", {{"arg", obj}, {"custom_obj_name", "obj"}}}}));
}

TEST_CASE("save: custom object class from the constant when the spec has none",
          "[json][custom_obj]") {
  Program ep = epgraph_test::with_tensor_meta(epgraph_test::constants_program());
  ep.graph_signature().input_specs[4] = {epgraph::InputKind::CUSTOM_OBJ,
                                         epgraph::CustomObjArgument{"obj", ""}, std::string("obj")};
  const ojson_t doc = ojson_t::parse(epgraph::json::save_exported_program_to_string(ep));
  const ojson_t obj = {{"name", "obj"}, {"class_fqn", epgraph_test::custom_class}};
  CHECK(doc["graph_module"]["graph"]["inputs"][4] == ojson_t({{"as_custom_obj", obj}}));
  CHECK(doc["graph_module"]["graph"]["custom_obj_values"] == ojson_t({{"obj", obj}}));
}

TEST_CASE("save: a custom object as a graph output is refused", "[json][custom_obj]") {
  Program ep = epgraph_test::with_tensor_meta(epgraph_test::constants_program());
  epgraph::Node* out = ep.graph().output_node();
  // output(args = ([call_torchbind, obj],)); spelled out: `{ArgumentList{...}}` is a copy for
  // some compilers and a nested list for others.
  epgraph::ArgumentList results;
  results.emplace_back(ep.graph().find_node("call_torchbind"));
  results.emplace_back(ep.graph().find_node("obj"));
  epgraph::ArgumentList args;
  args.emplace_back(std::move(results));
  out->set_args(std::move(args));
  REQUIRE(out->args().size() == 1);
  REQUIRE(out->args()[0].list() != nullptr);
  ep.graph_signature().output_specs.push_back(epgraph_test::user_output("obj"));
  CHECK_THROWS_AS(epgraph::json::save_exported_program_to_string(ep),
                  epgraph::json::serialization_error);
  CHECK_THROWS_WITH(epgraph::json::save_exported_program_to_string(ep),
                    "graph_module.graph.outputs: graph output 'obj' is a custom object, which "
                    "torch's format cannot return");
}

TEST_CASE("save: a getitem index past max_tuple_index is not written as a tuple", "[json][token]") {
  // One output per index would be written up to the index read: an absurd index must not make
  // the writer loop (or allocate) that far. The node is then a tensor without metadata.
  Program ep = epgraph_test::token_program(false);
  epgraph::Node* getitem = ep.graph().find_node("getitem");
  getitem->update_arg(1, std::int64_t{1} << 40);
  CHECK_THROWS_WITH(epgraph::json::save_exported_program_to_string(ep),
                    "graph_module.graph.tensor_values: node 'with_effects' produces a tensor but "
                    "has no tensor metadata (NodeMeta::val); set it before saving");
  getitem->update_arg(1, std::int64_t{65535});  // the largest index still written as a tuple
  const ojson_t doc = ojson_t::parse(epgraph::json::save_exported_program_to_string(ep));
  const ojson_t& outputs = doc["graph_module"]["graph"]["nodes"][0]["outputs"];
  REQUIRE(outputs.size() == 65536);
  CHECK(outputs[0] == ojson_t({{"as_tensor", {{"name", "with_effects_unused_0"}}}}));
  CHECK(outputs[65535] == ojson_t({{"as_tensor", {{"name", "getitem"}}}}));
}

TEST_CASE("save: a getitem that is not an output of the node it reads is refused", "[json]") {
  // Regression for tests/fuzz/regressions/fuzz_edits/output_token_renamed_round_trip: after
  // replace_all_uses_with moved the getitem onto a placeholder, the writer (like torch's
  // serializer, which skips every operator.getitem node) dropped the node, so the saved output
  // token named a value nothing produced and the file did not load back.
  Program ep = epgraph_test::token_program(false);
  epgraph::Node* effects = ep.graph().find_node("with_effects");
  epgraph::Node* x = ep.graph().find_node("x");
  (void)effects->replace_all_uses_with(x);
  ep.graph().erase_node(effects);
  REQUIRE(epgraph::to_string(ep.graph()).find("operator.getitem](args = (%x, 0)") !=
          std::string::npos);
  CHECK_THROWS_AS(epgraph::json::save_exported_program_to_string(ep),
                  epgraph::json::serialization_error);
  CHECK_THROWS_WITH(epgraph::json::save_exported_program_to_string(ep),
                    "graph_module.graph.nodes: node 'getitem' (operator.getitem) cannot be "
                    "written: torch's format records a getitem only as an output of the node it "
                    "reads, and 'x' is a placeholder, not a multi-output call_function node");

  // A node made in C++ read both through getitem and directly is written as one value: its
  // getitem user has no place in the file.
  Program both = epgraph_test::token_program(false);
  epgraph::Node* fx = both.graph().find_node("with_effects");
  fx->mutable_meta().val = both.graph().find_node("x")->meta().val;
  epgraph::ArgumentList results;
  results.emplace_back(both.graph().find_node("getitem"));
  results.emplace_back(fx);
  epgraph::ArgumentList args;
  args.emplace_back(std::move(results));
  both.graph().output_node()->set_args(std::move(args));
  both.graph_signature().output_specs.push_back(epgraph_test::user_output("with_effects"));
  CHECK_THROWS_WITH(epgraph::json::save_exported_program_to_string(both),
                    "graph_module.graph.nodes: node 'getitem' (operator.getitem) cannot be "
                    "written: torch's format records a getitem only as an output of the node it "
                    "reads, and 'with_effects' is not written as a multi-output node with that "
                    "index (a node made in C++ is written as one only when every user is a "
                    "getitem with a constant index)");
}

TEST_CASE("a tuple-producing node with its own val still writes one output per getitem",
          "[json][save][getitem]") {
  // Regression: a call_function node read through operator.getitem was written as a tuple only
  // when it had no `val`; with one it was written as a single tensor named after itself, and
  // loading the text failed with "value 'getitem_3' is not produced". The operator's schema
  // now decides: _native_batch_norm_legit_functional returns 5 tensors, so its val must be a
  // tuple of 5 (with_tensor_meta gives one), one output is written per return, named after its
  // getitem node, and the tuple node gets no tensor_values entry of its own.
  Program wrong = epgraph_test::linear_batchnorm_program();
  wrong.graph().find_node("_native_batch_norm_legit_functional")->mutable_meta().val =
      epgraph::tensor_meta_of(epgraph_test::tensor({2, 4}));
  CHECK_THROWS_WITH(epgraph::json::save_exported_program_to_string(
                        epgraph_test::with_tensor_meta(std::move(wrong))),
                    "graph_module.graph.nodes: node '_native_batch_norm_legit_functional' "
                    "(torch.ops.aten._native_batch_norm_legit_functional.default) cannot be "
                    "written: its schema returns 5 values, so meta().val must be a tuple of as "
                    "many (it is a tensor)");
  const Program bn = epgraph_test::with_tensor_meta(epgraph_test::linear_batchnorm_program());
  const std::string text = epgraph::json::save_exported_program_to_string(bn);
  const ojson_t doc = ojson_t::parse(text);
  const ojson_t* node = nullptr;
  for (const ojson_t& n : doc["graph_module"]["graph"]["nodes"]) {
    if (n["target"] == "torch.ops.aten._native_batch_norm_legit_functional.default") node = &n;
  }
  REQUIRE(node != nullptr);
  std::vector<std::string> outputs;
  for (const ojson_t& o : (*node)["outputs"]) outputs.push_back(o["as_tensor"]["name"]);
  CHECK(outputs == std::vector<std::string>{
                       "getitem", "_native_batch_norm_legit_functional_unused_1",
                       "_native_batch_norm_legit_functional_unused_2", "getitem_3", "getitem_4"});
  const ojson_t& values = doc["graph_module"]["graph"]["tensor_values"];
  CHECK_FALSE(values.contains("_native_batch_norm_legit_functional"));
  CHECK(values.contains("getitem_3"));
  // The unused outputs take their metadata from the tuple val (torch's loader needs it).
  CHECK(values["_native_batch_norm_legit_functional_unused_1"] == values["addmm"]);
  // The arguments are named and typed from the schema, as torch's serializer writes them.
  std::vector<std::string> names;
  for (const ojson_t& in : (*node)["inputs"]) names.push_back(in["name"]);
  CHECK(names == std::vector<std::string>{"input", "weight", "bias", "running_mean", "running_var",
                                          "training", "momentum", "eps"});
  CHECK((*node)["inputs"][5]["arg"] == ojson_t{{"as_bool", true}});
  CHECK((*node)["inputs"][7]["kind"] == 1);
  // Loading creates a getitem node for every output, as torch's deserializer does
  // (generate_getitems), so the two unused ones appear, with their metadata.
  const Program back = epgraph::json::load_exported_program_from_string(text);
  CHECK_NOTHROW(epgraph::verify(back, {false}));
  CHECK(epgraph_test::node_names(back.graph()) ==
        std::vector<std::string>{
            "p_linear_weight", "p_linear_bias", "p_bn_weight", "p_bn_bias", "b_bn_running_mean",
            "b_bn_running_var", "b_bn_num_batches_tracked", "x", "permute", "addmm", "add",
            "_native_batch_norm_legit_functional", "getitem",
            "_native_batch_norm_legit_functional_unused_1",
            "_native_batch_norm_legit_functional_unused_2", "getitem_3", "getitem_4", "output"});
  const epgraph::Node* g3 = back.graph().find_node("getitem_3");
  REQUIRE(g3 != nullptr);
  CHECK(g3->args()[1] == epgraph::Argument(3));
  CHECK(epgraph::to_string(back.graph_signature()) == epgraph::to_string(bn.graph_signature()));
  // A with_effects node with a val whose outputs are all used round-trips exactly.
  round_trip(epgraph_test::with_tensor_meta(epgraph_test::token_program(true)));
}

TEST_CASE("an input whose class_fqn disagrees with custom_obj_values is refused",
          "[json][load][custom_obj]") {
  // Regression for tests/fuzz/regressions/fuzz_json/custom_obj_class_fqn_disagrees.json: the
  // saver writes the input's class from one record and custom_obj_values from the other, so a
  // file where they disagree swapped them on every save/load round trip.
  ojson_t doc = round_trip(epgraph_test::with_tensor_meta(epgraph_test::constants_program()));
  ojson_t& input = doc["graph_module"]["graph"]["inputs"][4]["as_custom_obj"];
  REQUIRE(input["name"] == "obj");
  input["class_fqn"] = "__torch__.Other";
  CHECK_THROWS_AS(epgraph::json::load_exported_program_from_string(doc.dump()),
                  epgraph::json::serialization_error);
  CHECK_THROWS_WITH(epgraph::json::load_exported_program_from_string(doc.dump()),
                    "graph_module.graph.inputs[4].as_custom_obj.class_fqn: class_fqn "
                    "'__torch__.Other' disagrees with custom_obj_values['obj'].class_fqn "
                    "'__torch__.torch.classes._TorchScriptTesting._Foo'");
}

TEST_CASE(
    "a node moved between a multi-output node and its getitems is saved, reloaded, it "
    "follows them",
    "[json][save][getitem]") {
  // The schema writes a multi-output node's results as its outputs, with no node of their own:
  // torch's deserializer (and epgraph's) creates the getitem nodes right after their producer.
  // A node a pass put between the producer and its getitems is therefore saved (its inputs come
  // before it in the file) and comes back after the getitems: the same program, in torch's
  // order, which saves to the same document again (tensor_values follow graph order).
  Program bn = epgraph_test::with_tensor_meta(epgraph_test::linear_batchnorm_program());
  epgraph::Node* producer = bn.graph().find_node("_native_batch_norm_legit_functional");
  epgraph::Node* add = bn.graph().find_node("add");
  REQUIRE(producer != nullptr);
  REQUIRE(add != nullptr);
  producer->append(add);
  CHECK(epgraph_test::node_names(bn.graph()) ==
        std::vector<std::string>{"p_linear_weight", "p_linear_bias", "p_bn_weight", "p_bn_bias",
                                 "b_bn_running_mean", "b_bn_running_var",
                                 "b_bn_num_batches_tracked", "x", "permute", "addmm",
                                 "_native_batch_norm_legit_functional", "add", "getitem",
                                 "getitem_3", "getitem_4", "output"});
  const std::string text = epgraph::json::save_exported_program_to_string(bn);
  const ojson_t doc = ojson_t::parse(text);
  std::vector<std::string> written;
  for (const ojson_t& n : doc["graph_module"]["graph"]["nodes"]) {
    written.push_back(n["name"]);
  }
  CHECK(written ==
        std::vector<std::string>{"permute", "addmm", "_native_batch_norm_legit_functional", "add"});
  const Program back = epgraph::json::load_exported_program_from_string(text);
  CHECK_NOTHROW(epgraph::verify(back, {false}));
  CHECK(epgraph_test::node_names(back.graph()) ==
        std::vector<std::string>{"p_linear_weight", "p_linear_bias", "p_bn_weight", "p_bn_bias",
                                 "b_bn_running_mean", "b_bn_running_var",
                                 "b_bn_num_batches_tracked", "x", "permute", "addmm",
                                 "_native_batch_norm_legit_functional", "getitem",
                                 "_native_batch_norm_legit_functional_unused_1",
                                 "_native_batch_norm_legit_functional_unused_2", "getitem_3",
                                 "getitem_4", "add", "output"});
  CHECK(epgraph::to_string(back.graph_signature()) == epgraph::to_string(bn.graph_signature()));
  // Saved again: the same document, but for the order of tensor_values (graph order).
  ojson_t again = ojson_t::parse(epgraph::json::save_exported_program_to_string(back));
  ojson_t first = doc;
  CHECK(nlohmann::json(again["graph_module"]["graph"]["tensor_values"]) ==
        nlohmann::json(first["graph_module"]["graph"]["tensor_values"]));
  again["graph_module"]["graph"].erase("tensor_values");
  first["graph_module"]["graph"].erase("tensor_values");
  CHECK(again == first);
}

// Found by a breaker: a hand-written record whose "sym" names a table torch's format does not have
// was written into sym_bool_values (as_int there), text the loader then refused ("a SymBool has no
// member 'as_int'"). The saver refuses it, naming the node and the table, and writes nothing.
TEST_CASE("save: a record naming an unknown symbolic-value table is refused", "[json][sym]") {
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::Node* x = g->placeholder("x");
  x->mutable_meta().val =
      epgraph::tensor_meta_of(epgraph::HostTensor::zeros(epgraph::dtype::float32, {2, 3}));
  epgraph::Node* s = g->call_function("torch.ops.aten.sym_size.int", {x, 0});
  s->mutable_meta().val = epgraph::SymIntValue{std::int64_t{2}};
  s->mutable_meta().serialized = R"({"sym":{"table":"sym_foo_values","value":{"as_int":2}}})";
  g->output({x});
  epgraph::ExportGraphSignature sig;
  sig.input_specs.push_back({epgraph::InputKind::USER_INPUT, epgraph::TensorArgument{"x"}});
  sig.output_specs.push_back({epgraph::OutputKind::USER_OUTPUT, epgraph::TensorArgument{"x"}});
  const Program ep(std::move(g), std::move(sig));
  CHECK_THROWS_WITH(epgraph::json::save_exported_program_to_string(ep),
                    "graph_module.graph.nodes: node 'sym_size': its record names the "
                    "symbolic-value table 'sym_foo_values' (NodeMeta::serialized); torch's format "
                    "has sym_int_values, sym_float_values and sym_bool_values");
}
