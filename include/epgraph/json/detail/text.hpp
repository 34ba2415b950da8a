// JSON text helpers of the serializer: escaping strings and writing numbers as Python does.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Appending JSON text exactly as nlohmann::ordered_json::dump() (no indent, ensure_ascii off,
// strict UTF-8) would spell it. Internal to epgraph::json.
//
// The saver writes the bulk of a program (one serialized node and one `tensor_values` entry per
// graph value) straight to text: building the whole document as an ordered_json tree, dumping it
// and freeing it cost several times a bare dump() (bench/README.md, json_save).

#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>

#include "../../ir/tensor.hpp"
#include "checked_access.hpp"

namespace epgraph::json::detail {

// Writes JSON values at the end of a std::string the caller owns (it must outlive the writer).
// Every member produces the bytes ordered_json::dump() produces for the same value.
class JsonText {
 public:
  explicit JsonText(std::string& out)
      : out_(out), ser_(nlohmann::detail::output_adapter<char, std::string>(out), ' ') {}

  JsonText(const JsonText&) = delete;
  JsonText& operator=(const JsonText&) = delete;

  std::string& buffer() { return out_; }

  // Text that is already JSON (punctuation, literal keys).
  void raw(std::string_view s) { out_.append(s.data(), s.size()); }
  void raw(char c) { out_.push_back(c); }

  // A JSON string. Plain ASCII (control characters included) is escaped here; a string with a
  // byte >= 0x80 goes through nlohmann's serializer, which copies valid UTF-8 and throws
  // nlohmann::json::type_error 316 on invalid UTF-8, as dump() does.
  void string(std::string_view s) {
    const std::size_t mark = out_.size();
    out_.push_back('"');
    std::size_t start = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) continue;
      if (c >= 0x80) {
        out_.resize(mark);
        value(ojson(std::string(s)));
        return;
      }
      out_.append(s.data() + start, i - start);
      start = i + 1;
      escape(c);
    }
    out_.append(s.data() + start, s.size() - start);
    out_.push_back('"');
  }

  // `"key":`.
  void key(std::string_view k) {
    string(k);
    out_.push_back(':');
  }

  void integer(std::int64_t v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, static_cast<std::size_t>(r.ptr - buf));
  }

  void boolean(bool b) { raw(b ? std::string_view("true") : std::string_view("false")); }
  void null() { raw(std::string_view("null")); }

  // A float as the saver writes it (float_to_json: torch's strings for inf and NaN), formatted by
  // nlohmann (the shortest round-trip form dump() uses).
  void number(double v) { value(float_to_json(v)); }

  // Any value, through nlohmann's serializer.
  void value(const ojson& j) { ser_.dump(j, false, false, 0); }

  // The schema's SymInt union (sym_int_to_json).
  void sym_int(const SymInt& s) {
    if (const auto* i = std::get_if<std::int64_t>(&s)) {
      raw(std::string_view("{\"as_int\":"));
      integer(*i);
      raw('}');
      return;
    }
    const auto& e = std::get<SymExpr>(s);
    raw(std::string_view("{\"as_expr\":{\"expr_str\":"));
    string(e.expr);
    raw(std::string_view(",\"hint\":"));
    if (e.hint) {
      raw(std::string_view("{\"as_int\":"));
      integer(*e.hint);
      raw('}');
    } else {
      null();
    }
    raw(std::string_view("}}"));
  }

  // The schema's TensorMeta object (tensor_meta_to_json).
  void tensor_meta(const TensorMeta& m) {
    raw(std::string_view("{\"dtype\":"));
    integer(static_cast<std::int32_t>(m.dtype));
    raw(std::string_view(",\"sizes\":["));
    sym_ints(m.sizes);
    raw(std::string_view("],\"requires_grad\":"));
    boolean(m.requires_grad);
    raw(std::string_view(",\"device\":{\"type\":"));
    string(m.device.type);
    raw(std::string_view(",\"index\":"));
    if (m.device.index) {
      integer(*m.device.index);
    } else {
      null();
    }
    raw(std::string_view("},\"strides\":["));
    sym_ints(m.strides);
    raw(std::string_view("],\"storage_offset\":"));
    sym_int(m.storage_offset);
    raw(std::string_view(",\"layout\":"));
    integer(static_cast<std::int32_t>(m.layout));
    raw('}');
  }

 private:
  template <class List>
  void sym_ints(const List& l) {
    bool first = true;
    for (const auto& s : l) {
      if (!first) raw(',');
      first = false;
      sym_int(s);
    }
  }

  void escape(unsigned char c) {
    static constexpr char hex[] = "0123456789abcdef";
    switch (c) {
      case '"': raw(std::string_view("\\\"")); break;
      case '\\': raw(std::string_view("\\\\")); break;
      case '\b': raw(std::string_view("\\b")); break;
      case '\t': raw(std::string_view("\\t")); break;
      case '\n': raw(std::string_view("\\n")); break;
      case '\f': raw(std::string_view("\\f")); break;
      case '\r': raw(std::string_view("\\r")); break;
      default: {
        const char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        out_.append(u, 6);
      }
    }
  }

  std::string& out_;
  nlohmann::detail::serializer<ojson> ser_;
};

// Writes the tree `j` (the SimdValue overload, simd_value.hpp, writes a document's element).
inline void write_json(JsonText& out, const ojson& j) { out.value(j); }

}  // namespace epgraph::json::detail
