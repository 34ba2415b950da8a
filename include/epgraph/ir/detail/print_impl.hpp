// The definitions of ir/print.hpp's functions (see there for what each does). Included by
// ir/print.hpp header-only, and by src/compiled.cpp only in compiled mode.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>

#include "../print.hpp"

namespace epgraph {

[[nodiscard]] EPGRAPH_DETAIL_CORE_INLINE std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // d[.ddd]e[+-]XX, shortest round-trip digits
  const auto e_pos = sci.find('e');
  const int exponent = std::atoi(sci.c_str() + e_pos + 1);
  std::string mantissa = sci.substr(0, e_pos);
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits.push_back(c);
  }
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp_buf[16];
    const int abs_exp = exponent < 0 ? -exponent : exponent;
    std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', abs_exp);
    out += exp_buf;
    return out;
  }
  if (exponent < 0) {
    out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    return out;
  }
  const auto int_len = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= int_len) {
    out += digits + std::string(int_len - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, int_len) + "." + digits.substr(int_len);
  }
  return out;
}

[[nodiscard]] EPGRAPH_DETAIL_CORE_INLINE std::string python_str_repr(std::string_view s) {
  const bool use_double =
      s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
  const char quote = use_double ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == quote) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

namespace detail {

enum class ArgStyle { fx_str, python_repr };

EPGRAPH_DETAIL_CORE_INLINE void format_argument(std::string& out, const Argument& arg,
                                                ArgStyle style) {
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, None>) {
          out += "None";
        } else if constexpr (std::is_same_v<V, bool>) {
          out += v ? "True" : "False";
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          out += std::to_string(v);
        } else if constexpr (std::is_same_v<V, double>) {
          out += python_float_repr(v);
        } else if constexpr (std::is_same_v<V, Boxed<std::string>>) {
          out += style == ArgStyle::fx_str ? v.get() : python_str_repr(v.get());
        } else if constexpr (std::is_same_v<V, const Node*>) {
          if (style == ArgStyle::fx_str) out += '%';
          out += v->name();
        } else if constexpr (std::is_same_v<V, dtype>) {
          out += "torch.";
          out += dtype_name(v);
        } else if constexpr (std::is_same_v<V, Layout>) {
          out += "torch.";
          out += layout_name(v);
        } else if constexpr (std::is_same_v<V, MemoryFormat>) {
          out += "torch.";
          out += memory_format_name(v);
        } else if constexpr (std::is_same_v<V, Boxed<Device>>) {
          const Device& d = v.get();
          if (style == ArgStyle::fx_str) {
            out += d.str();
          } else {
            out += "device(type=" + python_str_repr(d.type);
            if (d.index) out += ", index=" + std::to_string(*d.index);
            out += ")";
          }
        } else if constexpr (std::is_same_v<V, Boxed<ArgumentList>>) {
          const ArgumentList& l = v.get();
          out += '[';
          for (std::size_t i = 0; i < l.size(); ++i) {
            if (i) out += ", ";
            format_argument(out, l[i], style);
          }
          out += ']';
        }
      },
      arg.value());
}

EPGRAPH_DETAIL_CORE_INLINE void format_tuple(std::string& out, const ArgumentList& items,
                                             ArgStyle style) {
  out += '(';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    format_argument(out, items[i], style);
  }
  if (items.size() == 1) out += ',';
  out += ')';
}

}  // namespace detail

[[nodiscard]] EPGRAPH_DETAIL_CORE_INLINE std::string format_arg(const Argument& arg) {
  std::string out;
  detail::format_argument(out, arg, detail::ArgStyle::fx_str);
  return out;
}

[[nodiscard]] EPGRAPH_DETAIL_CORE_INLINE std::string format_node(const Node& node) {
  std::string out;
  if (node.op() == OpCode::output) {
    out += "return ";
    const ArgumentView args = node.args();
    if (args.empty()) {
      out += "None";
    } else if (const ArgumentList* results = args[0].list()) {
      detail::format_tuple(out, *results, detail::ArgStyle::python_repr);
    } else {
      detail::format_argument(out, args[0], detail::ArgStyle::python_repr);
    }
    return out;
  }
  out += '%';
  out += node.name();
  out += " : [num_users=" + std::to_string(node.users().size()) + "] = ";
  out += op_name(node.op());
  out += "[target=";
  out += node.target();
  out += ']';
  if (node.op() == OpCode::placeholder) {
    if (!node.args().empty()) {
      out += "(default=";
      detail::format_argument(out, node.args()[0], detail::ArgStyle::fx_str);
      out += ')';
    }
    return out;
  }
  if (node.op() == OpCode::get_attr) return out;
  out += "(args = ";
  detail::format_tuple(out, node.args(), detail::ArgStyle::fx_str);
  out += ", kwargs = {";
  bool first = true;
  for (const auto& [key, value] : node.kwargs()) {
    if (!first) out += ", ";
    first = false;
    out += key + ": ";
    detail::format_argument(out, value, detail::ArgStyle::fx_str);
  }
  out += "})";
  return out;
}

[[nodiscard]] EPGRAPH_DETAIL_CORE_INLINE std::string to_string(const Graph& graph) {
  std::string out = "graph():";
  for (const Node& n : graph.nodes()) {
    out += "\n    ";
    out += format_node(n);
  }
  return out;
}

EPGRAPH_DETAIL_CORE_INLINE std::ostream& operator<<(std::ostream& os, const Graph& graph) {
  return os << to_string(graph) << '\n';
}

}  // namespace epgraph
