// A refused call leaves the program exactly as it was: check_refused runs the call, expects an
// exception of a given type with an exact message, and compares snapshots before and after.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "program_builders.hpp"
#include "snapshot.hpp"

namespace epgraph_test {

// Runs `f`, which must throw E with exactly `message`, and checks that `ep` is unchanged (and
// still lints).
template <class E, class F>
void check_refused(Program& ep, F&& f, const std::string& message) {
  const Snapshot before = snapshot(ep);
  bool threw = false;
  try {
    f();
  } catch (const E& e) {
    threw = true;
    CHECK(std::string(e.what()) == message);
  }
  CHECK(threw);
  CHECK(snapshot(ep) == before);
  ep.graph().lint();
}

}  // namespace epgraph_test
