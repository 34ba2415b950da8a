// Tests of the node-record definitions shared by the JSON reader and writer (json/node_record.hpp):
// the union-tag table, and the input records the reader writes and the writer reads.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/json/detail/node_record.hpp>
#include <epgraph/json/json.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using epgraph::json::detail::arg_tag;
using epgraph::json::detail::arg_tag_name;
using epgraph::json::detail::ArgTag;
using epgraph::json::detail::kArgTags;

}  // namespace

TEST_CASE("node record: every union tag maps to its enum value and back", "[json][node_record]") {
  CHECK(kArgTags.size() == 31);
  for (const auto& [name, tag] : kArgTags) {
    INFO(std::string(name));
    CHECK(arg_tag(name) == tag);
    CHECK(arg_tag_name(tag) == name);
  }
  CHECK(arg_tag("as_tensor") == ArgTag::as_tensor);
  CHECK(arg_tag("as_sym_bools") == ArgTag::as_sym_bools);
  CHECK(arg_tag("as_string_to_argument") == ArgTag::as_string_to_argument);
  // Not tags: neighbours in sorted order, prefixes, other spellings, the empty string.
  for (const char* other : {"", "as_", "as_tensorss", "as_tensor ", "As_tensor", "as_name",
                            "as_expr", "as_sym_in", "zz", "a"}) {
    INFO(other);
    CHECK(arg_tag(other) == ArgTag::unknown);
  }
  CHECK(arg_tag_name(ArgTag::unknown).empty());
}

TEST_CASE("node record: an input record written by the reader's helper is read by the writer's",
          "[json][node_record]") {
  namespace d = epgraph::json::detail;
  std::string text;
  d::JsonText rec(text);
  const nlohmann::ordered_json kind = 2;
  const nlohmann::ordered_json null_kind = nullptr;
  d::append_input_record_with(rec, "self", "as_tensor", "", false, [] { FAIL("no kind"); });
  d::append_input_record_with(rec, "op", "as_operator", "torch.ops.aten._print.default", true,
                              [&] { d::write_json(rec, kind); });
  d::append_input_record_with(rec, "q\"x", "as_ints", "", true,
                              [&] { d::write_json(rec, null_kind); });
  CHECK(text ==
        "{\"name\":\"self\",\"as\":\"as_tensor\"},"
        "{\"name\":\"op\",\"as\":\"as_operator\",\"operator\":\"torch.ops.aten._print.default\","
        "\"kind\":2},"
        "{\"name\":\"q\\\"x\",\"as\":\"as_ints\",\"kind\":null}");
  const auto records = nlohmann::ordered_json::parse("[" + text + "]");
  CHECK(d::input_record_tag(&records[0]) == ArgTag::as_tensor);
  CHECK(d::input_record_tag(&records[1]) == ArgTag::as_operator);
  CHECK(d::input_record_tag(&records[2]) == ArgTag::as_ints);
  CHECK(d::input_record_tag(nullptr) == ArgTag::unknown);
  CHECK(d::input_record_name(&records[2]) == "q\"x");
  CHECK(d::input_record_name(nullptr).empty());
}
