// sym_print: the test tool tests/interop/test_symbolic.py drives. Reads one symbolic expression
// per line on stdin (either printed form torch writes) and prints, per line,
//   OK <TAB> srepr <TAB> str        epgraph's two printed forms of what it read
//   ERROR <TAB> message             the value_error epgraph::sym::parse threw
// so the test can give both forms to torch's loader (sympy.sympify with torch's functions).
// SPDX-License-Identifier: BSD-3-Clause
#include <epgraph/ir/symbolic.hpp>
#include <iostream>
#include <string>

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    try {
      const epgraph::sym::Expr e = epgraph::sym::parse(line);
      std::cout << "OK\t" << epgraph::sym::srepr(e) << '\t' << epgraph::sym::str(e) << '\n';
    } catch (const epgraph::value_error& err) {
      std::cout << "ERROR\t" << err.what() << '\n';
    }
  }
  return 0;
}
