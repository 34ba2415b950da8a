// epgraph's exception types: value_error, runtime_error and the violation lists.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace epgraph {

namespace detail {

// `message` with each NUL character written as the six characters \u0000. what() is a C string:
// a name holding a NUL (JSON's "\u0000" is a legal escape) would otherwise cut the message short
// where the name is quoted, hiding the rest of it. O(size of the message).
inline std::string visible_nuls(std::string message) {
  for (std::size_t at = message.find('\0'); at != std::string::npos;
       at = message.find('\0', at + 6)) {
    message.replace(at, 1, "\\u0000");
  }
  return message;
}

}  // namespace detail

/// A caller passed a bad value: an empty name, a node of another graph, a kind that the function
/// does not accept. Mirrors Python's ValueError as raised by torch.fx and torch.export.
class value_error : public std::invalid_argument {
 public:
  /// Builds the error with the full message (which names the offending node, spec or field); a
  /// NUL character in it reads as \u0000 in what(). O(size of the message).
  explicit value_error(const std::string& message)
      : std::invalid_argument(detail::visible_nuls(message)) {}
};

/// infer_meta cannot compute a node's value, though the node may be right: epgraph has no rule
/// for its op, an input has no value, or the rule needs a concrete size (or a symbolic expression
/// it cannot read) where the node has a symbolic one. A plain value_error from infer_meta instead
/// means the op refuses its arguments as torch's meta function would: the program is wrong.
/// Mirrors torch's UnsupportedOperatorException and the data-dependent errors FakeTensorMode
/// raises (torch/_subclasses/fake_tensor.py).
class unsupported_meta_error : public value_error {
 public:
  /// Builds the error with the full message, which names the node and its target.
  explicit unsupported_meta_error(const std::string& message) : value_error(message) {}
};

/// The program or graph is in a state that the operation cannot work with: the signature does not
/// match the graph, a node still has users, a required node is missing. Mirrors Python's
/// RuntimeError / AssertionError as raised by torch.export and ExecuTorch's graph helpers.
class runtime_error : public std::runtime_error {
 public:
  /// Builds the error with the full message; a NUL character in it reads as \u0000 in what().
  /// O(size of the message).
  explicit runtime_error(const std::string& message)
      : std::runtime_error(detail::visible_nuls(message)) {}
};

/// Several independent problems found by one check. `what()` lists them all, one per line, after
/// a heading; `violations()` returns them one by one, in the order they were found.
class violations_error : public runtime_error {
 public:
  /// `heading` is the first line of what(); `violations` must not be empty.
  violations_error(const std::string& heading, std::vector<std::string> violations)
      : runtime_error(join(heading, violations)), violations_(std::move(violations)) {}

  /// Every problem found, each naming its offender, in the order found.
  [[nodiscard]] const std::vector<std::string>& violations() const noexcept { return violations_; }

 private:
  static std::string join(const std::string& heading, const std::vector<std::string>& items) {
    std::string out = heading;
    for (const auto& item : items) {
      out += "\n  - ";
      out += item;
    }
    return out;
  }
  std::vector<std::string> violations_;
};

/// Raised by Graph::lint(): a broken graph invariant (users and arguments disagree, an argument
/// defined after its user, a placeholder after a non-placeholder, no output node, ...).
class lint_error : public violations_error {
 public:
  /// See violations_error.
  explicit lint_error(std::vector<std::string> violations)
      : violations_error("Graph lint failed:", std::move(violations)) {}
};

/// Raised by verify(): the exported program breaks a rule of torch.export's verifier.
class verification_error : public violations_error {
 public:
  /// See violations_error.
  explicit verification_error(std::vector<std::string> violations)
      : violations_error("Exported program verification failed:", std::move(violations)) {}
};

}  // namespace epgraph
