// The reader's side of the node record (NodeMeta::serialized, see node_record.hpp): the record
// of each node written as text while the node is read.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the reader).

#include <string>
#include <string_view>

#include "../../ir/node.hpp"
#include "node_record.hpp"
#include "text.hpp"
#include "tree.hpp"

namespace epgraph::json::detail {

// Writes the record of one node at a time as text: the bytes dump() gives for {"args": [...],
// "kwargs": [...], "hop"?, "has_name"?, "extra"?, "out": [...], "sym"/"custom_obj"?} without
// building that tree (see bench/README.md, json_load). Its buffers are kept from one node
// to the next for their capacity. Not copyable (the texts refer to the buffers).
class NodeRecordWriter {
 public:
  NodeRecordWriter() = default;
  NodeRecordWriter(const NodeRecordWriter&) = delete;
  NodeRecordWriter& operator=(const NodeRecordWriter&) = delete;

  // Empties the texts of the inputs' records before a node's inputs are read.
  void clear_inputs() noexcept {
    args_buf_.clear();
    kwargs_buf_.clear();
  }
  // The text of the positional / keyword inputs' records (elements of "args" / "kwargs").
  JsonText& args() noexcept { return args_text_; }
  JsonText& kwargs() noexcept { return kwargs_text_; }
  // The record being written (after start()).
  JsonText& text() noexcept { return record_text_; }

  // Starts a node's record in record_buf_: `{"args":[<args_buf_>],"kwargs":[<kwargs_buf_>]`.
  void start() {
    record_buf_.clear();
    record_text_.raw('{');
    record_text_.key(record_key::args);
    record_text_.raw('[');
    record_text_.raw(args_buf_);
    record_text_.raw(std::string_view("],"));
    record_text_.key(record_key::kwargs);
    record_text_.raw('[');
    record_text_.raw(kwargs_buf_);
    record_text_.raw(']');
  }

  // Closes the record and stores it as `node`'s NodeMeta::serialized.
  void finish(Node* node) {
    record_text_.raw('}');
    node->mutable_meta().serialized = record_buf_;
  }

  // Fields of a serialized node that schema 8.20 does not define (a newer minor version's),
  // appended to the node's record as `,"extra":{...}` in the file's order; the writer puts them
  // back after the known fields. Nothing is appended for a node with only known fields.
  // J: ordered_json or SimdValue (simd_value.hpp).
  template <class J>
  static void append_unknown_node_fields(const J& jn, JsonText& out) {
    bool any = false;
    for_each_member(jn, [&](std::string_view k, const J& value) {
      if (k == node_key::target || k == node_key::inputs || k == node_key::outputs ||
          k == node_key::metadata || k == node_key::is_hop_single_tensor_return ||
          k == node_key::name) {
        return;
      }
      out.raw(',');
      if (!any) {
        out.key(record_key::extra);
        out.raw('{');
      }
      any = true;
      out.key(k);
      write_json(out, value);
    });
    if (any) out.raw('}');
  }

 private:
  // Scratch text of read_node's record (kept between nodes for their capacity).
  std::string args_buf_;
  std::string kwargs_buf_;
  std::string record_buf_;
  JsonText args_text_{args_buf_};
  JsonText kwargs_text_{kwargs_buf_};
  JsonText record_text_{record_buf_};
};

// Stores `info` as `node`'s record unless it is empty (a placeholder's or a get_attr node's).
inline void store_record(Node* node, const ojson& info) {
  if (!info.empty()) node->mutable_meta().serialized = info.dump();
}

}  // namespace epgraph::json::detail
