// epgraph test support: a full, comparable picture of an exported program, used to prove that a
// failing edit leaves the program exactly as it was (the strong exception guarantee).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <epgraph/epgraph.hpp>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

namespace epgraph_test {

/// Everything observable about a program that an edit may change: the printed graph (node order,
/// names, ops, targets, arguments, user counts), each node's users in order and its metadata,
/// the insertion point, the namespace (taken names and counters), the printed signature
/// (kinds, names, targets, persistence, in order), and both dictionaries (keys in order with a
/// description of each value).
struct Snapshot {
  std::string graph;
  std::vector<std::string> users;
  std::vector<std::string> meta;
  std::string insertion_point;
  std::size_t size = 0;
  std::size_t num_placeholders = 0;
  epgraph::Namespace names;
  std::string signature;
  std::vector<std::string> state_dict;
  std::vector<std::string> constants;
  /// The nested graphs the program owns: "target:\n<printed graph>" each, by target.
  std::vector<std::string> nested;

  friend bool operator==(const Snapshot& a, const Snapshot& b) {
    return a.graph == b.graph && a.users == b.users && a.meta == b.meta &&
           a.insertion_point == b.insertion_point && a.size == b.size &&
           a.num_placeholders == b.num_placeholders && a.names == b.names &&
           a.signature == b.signature && a.state_dict == b.state_dict &&
           a.constants == b.constants && a.nested == b.nested;
  }
  friend bool operator!=(const Snapshot& a, const Snapshot& b) { return !(a == b); }
};

inline std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

/// Prints a snapshot (Catch shows it when a comparison fails).
inline std::ostream& operator<<(std::ostream& os, const Snapshot& s) {
  os << s.graph << "\nusers: " << join(s.users, "; ") << "\nmeta: " << join(s.meta, "; ")
     << "\ninsertion point: " << s.insertion_point << "\nsize: " << s.size
     << " placeholders: " << s.num_placeholders << " names taken: " << s.names.size()
     << "\nsignature:" << s.signature << "state_dict: " << join(s.state_dict)
     << "\nconstants: " << join(s.constants) << "\nnested: " << join(s.nested, "\n");
  return os;
}

/// "float32[2, 3]" from tensor metadata.
inline std::string describe(const epgraph::TensorMeta& m) {
  std::string out(epgraph::dtype_name(m.dtype));
  out += "[";
  for (std::size_t i = 0; i < m.sizes.size(); ++i) {
    if (i) out += ", ";
    if (const auto* v = std::get_if<std::int64_t>(&m.sizes[i])) {
      out += std::to_string(*v);
    } else {
      out += std::get<epgraph::SymExpr>(m.sizes[i]).expr;
    }
  }
  return out + "]";
}

/// Any tensor through its traits: dtype and sizes.
template <class T>
std::string describe_tensor(const T& t) {
  return describe(epgraph::tensor_meta_of(t));
}

/// A HostTensor: dtype, sizes and a checksum of its bytes (FNV-1a).
inline std::string describe_tensor(const epgraph::HostTensor& t) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::byte b : t.bytes()) {
    h ^= static_cast<std::uint64_t>(b);
    h *= 1099511628211ull;
  }
  return describe(epgraph::tensor_meta_of(t)) + "#" + std::to_string(h);
}

/// Takes the snapshot of `ep`. O(program size).
template <class T>
Snapshot snapshot(const epgraph::ExportedProgram<T>& ep) {
  Snapshot s;
  const epgraph::Graph& g = ep.graph();
  s.graph = epgraph::to_string(g);
  for (const epgraph::Node& n : g.nodes()) {
    std::vector<std::string> users;
    for (const epgraph::Node* u : n.users()) users.emplace_back(u->name());
    s.users.push_back(std::string(n.name()) + ": " + join(users));
    const epgraph::NodeMeta& m = n.meta();
    s.meta.push_back(std::string(n.name()) + ": requested=" + m.requested_name + " val=" +
                     (m.val.tensor()      ? describe(*m.val.tensor())
                      : m.val.has_value() ? m.val.describe()
                                          : "-") +
                     " other=" + std::to_string(m.other.size()));
  }
  const auto point = g.insertion_point();
  s.insertion_point = point.anchor == nullptr ? "default"
                                              : std::string(point.before ? "before " : "after ") +
                                                    std::string(point.anchor->name());
  s.size = g.size();
  s.num_placeholders = g.num_placeholders();
  s.names = g.names();
  s.signature = epgraph::to_string(ep.graph_signature());
  for (const auto& [key, value] : ep.state_dict()) {
    s.state_dict.push_back(key + ": " + describe_tensor(value));
  }
  for (const auto& [key, value] : ep.constants()) {
    if (const auto* t = std::get_if<T>(&value)) {
      s.constants.push_back(key + ": tensor " + describe_tensor(*t));
    } else {
      const auto& obj = std::get<epgraph::ScriptObject>(value);
      s.constants.push_back(key + ": object " + obj.class_fqn + " (" +
                            std::to_string(obj.payload.size()) + " bytes)");
    }
  }
  for (const auto& [target, nested] : ep.nested_graphs()) {
    s.nested.push_back(target + ":\n" + epgraph::to_string(*nested));
  }
  return s;
}

/// Keys of an ordered_dict, in order.
template <class D>
std::vector<std::string> keys(const D& dict) {
  std::vector<std::string> out;
  for (const auto& entry : dict) out.push_back(entry.first);
  return out;
}

}  // namespace epgraph_test

/// Checks that `expr` throws `Exception` with exactly `message`, twice, and that the program
/// `ep` is exactly as before after each attempt (strong guarantee).
#define EPGRAPH_CHECK_THROWS_UNCHANGED(ep, expr, Exception, message) \
  do {                                                               \
    const auto epgraph_before_ = ::epgraph_test::snapshot(ep);       \
    CHECK_THROWS_AS(expr, Exception);                                \
    CHECK(::epgraph_test::snapshot(ep) == epgraph_before_);          \
    CHECK_THROWS_WITH(expr, message);                                \
    CHECK(::epgraph_test::snapshot(ep) == epgraph_before_);          \
  } while (false)
