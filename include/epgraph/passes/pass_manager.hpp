// Running passes over an exported program: PassManager, after torch.fx's
// torch/fx/passes/infra/pass_manager.py.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../program/exported_program.hpp"
#include "../program/verify.hpp"

namespace epgraph {

/// A pass failed or broke the program (PassManager): what() is torch's message "An error
/// occurred when running the 'fuse' pass after the following passes: ['dce']" followed by ": "
/// and the cause's what(); the cause is nested (std::rethrow_if_nested).
class pass_error : public runtime_error {
 public:
  /// `pass` is the failing pass's name; `message` the full message.
  pass_error(std::string pass, const std::string& message)
      : runtime_error(message), pass_(std::move(pass)) {}
  /// The name of the pass that failed. O(1).
  [[nodiscard]] const std::string& pass() const noexcept { return pass_; }

 private:
  std::string pass_;
};

/// Runs a list of passes over an ExportedProgram, `steps` times at most and until none changes
/// anything, optionally checking the program after each pass (torch's
/// torch.fx.passes.infra.pass_manager.PassManager). A pass is a name and a callable that edits
/// the program and returns whether it changed anything (torch's PassResult.modified).
/// Differences from torch: the program is edited in place (no new module is returned); the
/// check run with `run_checks_after_each_pass` is epgraph::verify unless add_checks sets
/// another (torch's default check does nothing); the pass-order constraints of torch
/// (`add_constraint`) are not offered: passes run in the order added.
template <class Tensor>
class PassManager {
 public:
  /// A pass: edits the program, returns whether it changed anything.
  using Pass = std::function<bool(ExportedProgram<Tensor>&)>;
  /// A check: throws when the program is wrong.
  using Check = std::function<void(const ExportedProgram<Tensor>&)>;

  /// A manager running no pass yet.
  /// Arguments: `steps`, the most times the whole list runs (torch's default 1; must be >= 1,
  /// else value_error "PassManager steps must be at least 1, got 0");
  /// `run_checks_after_each_pass`, check the program after each pass (the check runs before the
  /// first pass too, with the flag or when add_checks set one, as in torch).
  /// Complexity: O(1). Mirrors: PassManager.__init__.
  explicit PassManager(int steps = 1, bool run_checks_after_each_pass = false)
      : steps_(steps), run_checks_(run_checks_after_each_pass) {
    if (steps < 1) {
      throw value_error("PassManager steps must be at least 1, got " + std::to_string(steps));
    }
  }

  /// Appends a pass named `name` (used in errors). Throws value_error "Pass 'x' has no
  /// callable" when `pass` is empty; std::bad_alloc. O(1) amortized. Mirrors: add_pass.
  void add_pass(std::string name, Pass pass) {
    if (!pass) throw value_error("Pass '" + name + "' has no callable");
    passes_.push_back({std::move(name), std::move(pass)});
  }

  /// Replaces the check run when run_checks_after_each_pass is set (default: verify(program)).
  /// Throws value_error "PassManager check has no callable" when empty. O(1). Mirrors:
  /// add_checks.
  void add_checks(Check check) {
    if (!check) throw value_error("PassManager check has no callable");
    check_ = std::move(check);
  }

  /// The names of the passes, in order. O(1).
  [[nodiscard]] std::vector<std::string> pass_names() const {
    std::vector<std::string> names;
    for (const auto& p : passes_) names.push_back(p.name);
    return names;
  }

  /// Runs the passes in order over `program`, the whole list up to `steps` times, stopping after
  /// a round in which no pass changed anything. Checks the program first when checks are on or
  /// add_checks set one (torch's `self.check(module)` before the loop), and after every pass when
  /// checks are on.
  /// Arguments: `program`, edited in place.
  /// Returns whether any pass changed anything (torch's PassResult.modified).
  /// Errors: pass_error "An error occurred when running the 'fuse' pass after the following
  /// passes: ['dce']: <what the pass or the check threw>" when a pass throws or the check fails
  /// after it (the cause nested; a check's several problems on one line, joined by "; ");
  /// a failing check before the first pass throws the check's own
  /// error (torch does the same). Guarantee: that of the passes — each of epgraph's edits is
  /// all-or-nothing, but passes that ran before the failing one keep their effect, as in torch.
  /// Complexity: the passes' and checks', times the rounds run.
  /// Mirrors: PassManager.__call__ (torch/fx/passes/infra/pass_manager.py).
  bool operator()(ExportedProgram<Tensor>& program) const {
    // torch checks once before the first pass whatever run_checks_after_each_pass says; its
    // default check does nothing, so epgraph's default (verify) runs only with the flag.
    if (run_checks_ || check_) check(program);
    bool overall = false;
    for (int step = 0; step < steps_; ++step) {
      bool modified = false;
      for (std::size_t i = 0; i < passes_.size(); ++i) {
        try {
          modified = passes_[i].run(program) || modified;
          if (run_checks_) check(program);
        } catch (const std::exception& e) {
          std::throw_with_nested(pass_error(passes_[i].name, failure_message(i, one_line(e))));
        }
      }
      overall = overall || modified;
      if (!modified) break;
    }
    return overall;
  }

 private:
  struct NamedPass {
    std::string name;
    Pass run;
  };

  void check(const ExportedProgram<Tensor>& program) const {
    if (check_) {
      check_(program);
    } else {
      verify(program);
    }
  }

  // The cause on one line: a check's several problems (violations_error: verify, lint) joined
  // by "; " after its heading, so pass_error::what() is one line as torch's message is.
  static std::string one_line(const std::exception& e) {
    const auto* v = dynamic_cast<const violations_error*>(&e);
    if (v == nullptr) return e.what();
    const std::string text = e.what();
    std::string out = text.substr(0, text.find('\n'));
    for (std::size_t k = 0; k < v->violations().size(); ++k) {
      out += (k ? "; " : " ") + v->violations()[k];
    }
    return out;
  }

  std::string failure_message(std::size_t i, const std::string& cause) const {
    std::string before = "[";
    for (std::size_t k = 0; k < i; ++k) before += (k ? ", '" : "'") + passes_[k].name + "'";
    before += "]";
    return "An error occurred when running the '" + passes_[i].name +
           "' pass after the following passes: " + before + ": " + cause;
  }

  int steps_;
  bool run_checks_;
  Check check_;
  std::vector<NamedPass> passes_;
};

}  // namespace epgraph
