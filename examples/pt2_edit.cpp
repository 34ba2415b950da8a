// pt2_edit: the command-line tool to show, validate and edit .pt2 / JSON programs.
// SPDX-License-Identifier: BSD-3-Clause
//
// pt2_edit: show, validate and edit torch.export programs from the command line.
//
//   pt2_edit show FILE [--program NAME]
//   pt2_edit validate FILE [--strict] [--data] [--meta]
//   pt2_edit add-buffer FILE --name b_kv_cache --dtype float32 --shape 1,8,128,64 [--fill 0] -o OUT
//   pt2_edit copy FILE -o OUT
//   pt2_edit partition FILE (--ops T1,T2,... | --except T1,...) [--no-single-node]
//            [--skip-horizontal-fusion] [-o OUT]
//   pt2_edit specialize FILE --dim SYMBOL=VALUE [--dim SYMBOL=VALUE ...] [-o OUT]
//   pt2_edit extract FILE (--ops T1,T2,... | --except T1,...) [--no-single-node]
//            [--skip-horizontal-fusion] --op-namespace NS -o HOST --extract-dir DIR
//   pt2_edit outline FILE (--ops T1,T2,... | --except T1,...) [--no-single-node]
//            [--skip-horizontal-fusion] -o OUT
//
// `add-buffer` adds a mutable buffer whose placeholder is named NAME exactly: a NAME torch.fx
// would rename (taken by a node: `linear` -> `linear_1`; a keyword: `class` -> `class_1`) is an
// error naming the clash (exit 2, nothing written).
//
// An option a command does not take is an error naming it and the command ("pt2_edit: unknown
// option '--ops' for command 'copy' (--ops is an option of partition, extract, outline)"),
// followed by the usage (exit 2).
//
// `copy` loads FILE and saves it unchanged to OUT (the interop tests check that PyTorch reads
// the result back as the same program).
//
// FILE is an exported-program JSON record (`*.json`) or a PT2 / legacy `.pt2`/`.ep` archive (a
// zip file; a `.pt2`/`.ep` name is always read as an archive, so an empty or truncated one is
// reported as a broken archive). `--fill V` is read as the Python literal V given to torch.full
// (an integer is an int, anything else a float such as 1.5, nan or -inf) and converted to DTYPE
// as torch.full converts it; a value the dtype cannot hold is refused with torch's message
// ("value cannot be converted to type uint8_t without overflow"). A JSON record carries no weights,
// and a legacy archive (torch <= 2.7) keeps them in pickles epgraph does not read, so `validate`
// skips the state checks for both. `validate` fails (exit 1) on what torch's own verifier rejects
// (epgraph::verify at VerifyLevel::torch) and prints departures from torch's canonical input
// order (which torch accepts and PyTorch's NativeRT runtime refuses; a `strict=True` export can
// have one) as warnings; with `--strict` they are violations too (VerifyLevel::canonical_order).
// Loading reads weights lazily and `copy` passes unchanged entries on raw, like `cp`, so neither
// reads every byte: `validate --data` also reads every entry of an archive through to its end
// and checks its CRC and size (O(archive size) time, 64 KiB of memory), naming a corrupt entry.
// `validate --meta` also recomputes every node's value with epgraph::propagate_meta (check mode,
// nothing changed) and prints `meta: nodes=N computed=C equal=E differ=D uncomputed=U`, each node
// whose stored value differs from the computed one (both values), each node whose op refuses its
// arguments as torch's meta function would, and the nodes it cannot compute (an op without a
// rule, a symbolic size a rule needs concrete); a difference or a refusal fails validation
// (exit 1), a node epgraph cannot compute does not.
// Exit status: 0 on success, 1 when validation finds violations, 2
// on bad usage or input.
//
// `partition` runs torch.fx's CapabilityBasedPartitioner (epgraph/passes/partitioner.hpp) with
// a backend supporting the call_function nodes of the targets --ops lists (as torch prints
// them: `torch.ops.aten.linear.default`, or `torch.ops.aten.relu` for every overload), or every
// call_function node but those of the targets --except lists; `--no-single-node` drops
// partitions of one compute node (torch's default, allows_single_node_partition=False). It
// prints one line per partition, "partition ID: NAME, NAME, ...", and with `-o OUT` writes the
// program with each partition's tag ("tag<ID>") in its nodes' custom metadata
// (node.meta["custom"]["delegation_tag"]) for an ExecuTorch partitioner to read. Items are
// trimmed of surrounding blanks; an empty item, a blank inside one, or a target that no
// call_function node of the graph has and that is not a well-formed `torch.ops.NS.OP[.OVERLOAD]`
// name is an error (exit 2) naming it, with the graph's spelling when one ends like it
// ("did you mean 'torch.ops.aten.linear.default'?"), and so is an aten or prims operator or
// overload torch does not have ("unknown operator 'torch.ops.aten.not_an_op.default'",
// "unknown overload 'torch.ops.aten.relu.Foo'"); an absent existing one (a backend's fixed list)
// is a note on stderr. `operator.getitem` (as print(ep.graph) shows it) and `_operator.getitem`
// (as torch's _get_qualified_name spells it) name the same target. Partition IDs are the ids
// torch's CapabilityBasedPartitioner gives (the same numbers, and tags "tag<ID>", as torch):
// they need not start at 0 nor be consecutive (a partition merged into another or dropped by
// --no-single-node leaves its id unused). `-o` may name FILE itself: the archive is written to a
// temporary file and renamed over it at the end.
//
// `specialize` fixes symbols of a dynamic program to values with epgraph::specialize
// (epgraph/passes/specialize.hpp): `--dim s70=16` makes every size `s70` 16, folds the
// `sym_size` nodes and runtime asserts that become constant, drops the symbol's range constraint
// and recomputes every value, nested graphs included (cond's branches, map's body: made Graphs
// of the program with epgraph::json::materialize_nested_graphs), so that a backend without
// dynamic shapes can take the program. It
// prints one line per symbol ("specialized s70 = 16 (range [2, 64])"), the counts of folded
// nodes and removed asserts, the conds whose predicate became constant (replaced by the branch
// they take), the dropped range constraints and the recomputed values, and with
// `-o OUT` writes the result. A symbol not in the program's range_constraints, a value outside
// its range, or a runtime assert that the value makes false is an error (stderr, exit 2) naming
// it; nothing is written then. A node whose recomputed value differs from its stored value with
// the symbols substituted (epgraph's rule and torch's stored value disagree) is an error too
// (stderr naming the nodes, exit 1, nothing written).
// `extract` proposes the same partitions (same options) and hands each to a backend compiler:
// DIR/subgraph_<ID>.pt2 is the partition as a program of its own (epgraph::extract_partition:
// boundary values as user inputs in order of first use, the weights it reads with their data,
// escaping values as user outputs in graph order), and HOST is FILE with each partition replaced
// by one call to the custom op NS::subgraph_<ID> (epgraph::replace_partition_with_call; weights
// only the partition read are dropped). It prints one line per partition, "partition ID:
// NS::subgraph_ID inputs=[A, B] weights=[P, ...] outputs=[C, D] -> DIR/subgraph_ID.pt2", the op's
// arguments and results in order. DIR (and its missing parents) is created; it may hold other
// files. Nothing is written when a partition cannot be extracted, a file DIR/subgraph_<ID>.pt2
// exists already (the tool does not overwrite one), a part of DIR is a file, or HOST's directory
// does not exist.
//
// `outline` proposes the same partitions (same options) and moves each into a nested graph the
// program calls through torch.ops.higher_order.invoke_subgraph (epgraph::outline_partition), the
// form torch.export gives a torch.compiler.nested_compile_region: operands are the values from
// outside the partition it reads (weights included) in order of first use, results its escaping
// values in graph order, read through getitem nodes. It prints one line per partition,
// "partition ID: invoke_subgraph(repeated_subgraphN, 'subgraph_N') operands=[A, B]
// outputs=[C, D] -> NAME" (NAME: the call node), and writes OUT (required). Nothing is written
// when a partition cannot be outlined.
//
// `--program NAME` (any command) picks the program of an archive holding several (package_pt2's
// `exported_programs={"model": a, "helper": b}`); without it the only program is used, or the
// one named `model`, as torch.export.load does. `show` lists the programs first when there are
// several ("# programs: helper, model (shown: model)"); saving keeps the others byte for byte.

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <epgraph/archive/archive.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/json/json.hpp>
#include <epgraph/passes/extract_partition.hpp>
#include <epgraph/passes/outline_partition.hpp>
#include <epgraph/passes/partitioner.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/verify.hpp>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

// Prints the usage to `out` and returns `code`: 2 (bad usage, on stderr) unless asked for with
// --help / -h (exit 0, on stdout).
int usage(std::ostream& out = std::cerr, int code = 2) {
  out << "usage:\n"
         "  pt2_edit show FILE [--program NAME]\n"
         "  pt2_edit validate FILE [--strict] [--data] [--meta]\n"
         "  pt2_edit add-buffer FILE --name NAME --dtype DTYPE --shape D0,D1,... [--fill V] "
         "-o OUT\n"
         "  pt2_edit copy FILE -o OUT\n"
         "  pt2_edit partition FILE (--ops T1,T2,... | --except T1,...) [--no-single-node] "
         "[--skip-horizontal-fusion] [-o OUT]\n"
         "  pt2_edit specialize FILE --dim SYMBOL=VALUE [--dim SYMBOL=VALUE ...] [-o OUT]\n"
         "  pt2_edit extract FILE (--ops T1,T2,... | --except T1,...) [--no-single-node] "
         "[--skip-horizontal-fusion] --op-namespace NS -o HOST --extract-dir DIR\n"
         "  pt2_edit outline FILE (--ops T1,T2,... | --except T1,...) [--no-single-node] "
         "[--skip-horizontal-fusion] -o OUT\n"
         "  (any command: --program NAME picks a program of a multi-program archive)\n"
         "  (partition IDs are torch's CapabilityBasedPartitioner ids, as torch numbers and tags\n"
         "   them: they need not start at 0 nor be consecutive)\n";
  return code;
}

// Reports an option `option` that command `cmd` does not take: "pt2_edit: unknown option '--foo'
// for command 'copy'", followed, when another command takes it, by the commands that do ("(--ops
// is an option of partition, extract, outline)"), then the usage; returns 2.
int unknown_option(const std::string& cmd, const std::string& option) {
  static const std::vector<std::pair<std::string, std::string>> owners = {
      {"--strict", "validate"},
      {"--data", "validate"},
      {"--meta", "validate"},
      {"--name", "add-buffer"},
      {"--dtype", "add-buffer"},
      {"--shape", "add-buffer"},
      {"--fill", "add-buffer"},
      {"-o", "add-buffer, copy, partition, specialize, extract, outline"},
      {"--ops", "partition, extract, outline"},
      {"--except", "partition, extract, outline"},
      {"--no-single-node", "partition, extract, outline"},
      {"--skip-horizontal-fusion", "partition, extract, outline"},
      {"--dim", "specialize"},
      {"--op-namespace", "extract"},
      {"--extract-dir", "extract"},
  };
  std::cerr << "pt2_edit: unknown option '" << option << "' for command '" << cmd << "'";
  for (const auto& [name, commands] : owners) {
    if (name == option) std::cerr << " (" << option << " is an option of " << commands << ")";
  }
  std::cerr << "\n";
  return usage();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A `.pt2` / `.ep` file is an archive, whatever it holds (an empty or truncated one is then
// reported as a broken archive, not as malformed JSON); so is any file that starts like a zip
// file ("PK\3\4", or "PK\5\6" for an empty zip). Anything else is read as a JSON record.
bool is_archive(const std::string& path) {
  if (ends_with(path, ".pt2") || ends_with(path, ".ep")) return true;
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' &&
         ((magic[2] == 3 && magic[3] == 4) || (magic[2] == 5 && magic[3] == 6));
}

// The program `--program NAME` names ("" when not given: the archive's default).
std::string& program_option() {
  static std::string name;
  return name;
}

// Removes `--program NAME` from the arguments (keeping NAME in program_option()); false when
// `--program` has no value.
bool take_program_option(int& argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) != "--program") continue;
    if (i + 1 >= argc) return false;
    program_option() = argv[i + 1];
    for (int j = i; j + 2 <= argc; ++j) argv[j] = argv[j + 2];
    argc -= 2;
    break;
  }
  return true;
}

epgraph::ExportedProgram<epgraph::HostTensor> load(const std::string& path) {
  if (is_archive(path)) {
    return epgraph::archive::load_archive<epgraph::HostTensor>(path, program_option());
  }
  if (!program_option().empty()) {
    throw epgraph::value_error("--program: " + path + " is a JSON record, which holds one program");
  }
  return epgraph::json::load_exported_program<epgraph::HostTensor>(path);
}

// Whether `ep` was loaded from a legacy (torch <= 2.7) archive.
bool is_legacy(const epgraph::ExportedProgram<epgraph::HostTensor>& ep) {
  return ep.metadata().archive && ep.metadata().archive->layout == "legacy";
}

// The inputs whose values a program reads from its state_dict or constants (parameters,
// buffers, tensor constants, custom objects) that `ep` does not hold, as "'<input>' -> '<target>'".
std::vector<std::string> missing_state(const epgraph::ExportedProgram<epgraph::HostTensor>& ep) {
  using epgraph::InputKind;
  std::vector<std::string> missing;
  for (const auto& spec : ep.graph_signature().input_specs) {
    const InputKind kind = spec.kind();
    if (kind == InputKind::USER_INPUT || kind == InputKind::TOKEN || !spec.target()) continue;
    const std::string& target = *spec.target();
    const bool held = ep.state_dict().contains(target) || ep.constants().contains(target);
    if (!held) missing.push_back("'" + spec.name() + "' -> '" + target + "'");
  }
  return missing;
}

// Saves `ep`, loaded from `file`, as an archive when OUT ends in .pt2 or .ep (returns true), else
// as a JSON record (returns false). A JSON record holds no weights: saving a program read from
// one as an archive would write an archive whose weights are missing, which torch.export.load
// refuses, so that is refused here (value_error naming the first missing input, OUT untouched);
// saving an archive's program as a JSON record says what is left behind.
bool save(const epgraph::ExportedProgram<epgraph::HostTensor>& ep, const std::string& file,
          const std::string& out) {
  const bool archive_out = (out.size() > 4 && out.compare(out.size() - 4, 4, ".pt2") == 0) ||
                           (out.size() > 3 && out.compare(out.size() - 3, 3, ".ep") == 0);
  const bool archive_in = ep.metadata().archive.has_value();
  if (archive_out && !archive_in) {
    const std::vector<std::string> missing = missing_state(ep);
    if (!missing.empty()) {
      throw epgraph::value_error(out + ": not written: " + file +
                                 " is a JSON record, which holds no weights, and the " +
                                 "program reads " + std::to_string(missing.size()) +
                                 " tensor(s) or object(s) from them (first: " + missing.front() +
                                 "); an archive without them does not load in torch.export.load");
    }
  }
  if (archive_out) {
    epgraph::archive::save_archive(ep, out);
  } else {
    epgraph::json::save_exported_program(ep, out);
    if (archive_in) {
      std::cout << "note: " << out << " is a JSON record, which holds no weights: the "
                << ep.state_dict().size() << " state_dict tensor(s), " << ep.constants().size()
                << " constant(s) and the other files of " << file << " are not in it\n";
    }
  }
  return archive_out;
}

// `--shape 2,3`: sizes separated by commas, each a decimal integer (a sign allowed: a negative
// size is refused by HostTensor with torch's message). Throws value_error naming the item.
std::vector<std::int64_t> parse_shape(const std::string& text) {
  std::vector<std::int64_t> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const std::size_t first = (!item.empty() && (item[0] == '-' || item[0] == '+')) ? 1 : 0;
    if (first >= item.size() || item.find_first_not_of("0123456789", first) != std::string::npos) {
      throw epgraph::value_error("--shape '" + text + "': '" + item + "' is not an integer size");
    }
    errno = 0;
    const long long v = std::strtoll(item.c_str(), nullptr, 10);
    if (errno == ERANGE) {
      throw epgraph::value_error("--shape '" + text + "': size " + item + " is out of range");
    }
    out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

// `--fill V` read as Python reads the literal V given to torch.full: an integer (optional sign,
// decimal digits) is a Python int, anything else a Python float ("1.5", "1e3", "nan", "-inf").
// HostTensor::full then converts it as torch.full does and refuses what torch refuses.
struct Fill {
  bool integer = true;
  bool big = false;  // an int in (INT64_MAX, UINT64_MAX]: torch's uint64 scalar
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0.0;
};

Fill parse_fill(const std::string& text) {
  Fill f;
  std::size_t pos = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
  const bool digits =
      pos < text.size() && text.find_first_not_of("0123456789", pos) == std::string::npos;
  if (digits) {
    const bool negative = text[0] == '-';
    errno = 0;
    if (negative) {
      f.i = std::strtoll(text.c_str(), nullptr, 10);
      // torch: "can't convert negative int to unsigned" (OverflowError) below INT64_MIN.
      if (errno == ERANGE) throw epgraph::value_error("can't convert negative int to unsigned");
    } else {
      f.u = std::strtoull(text.c_str() + pos, nullptr, 10);
      // torch: "int too big to convert" (OverflowError) beyond UINT64_MAX.
      if (errno == ERANGE) throw epgraph::value_error("int too big to convert");
      f.big = f.u > static_cast<std::uint64_t>(INT64_MAX);
      f.i = static_cast<std::int64_t>(f.u);
    }
    return f;
  }
  f.integer = false;
  // strtod as Python's float(): "1e999" is inf (ERANGE, HUGE_VAL), an underflow the nearest
  // double; "nan", "inf", "-inf", "infinity" in any case.
  char* end = nullptr;
  f.d = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    throw epgraph::value_error("could not convert string to float: '" + text + "'");
  }
  return f;
}

epgraph::HostTensor fill_tensor(epgraph::dtype type, std::vector<std::int64_t> sizes,
                                const Fill& f) {
  if (!f.integer) return epgraph::HostTensor::full(type, std::move(sizes), f.d);
  if (f.big) return epgraph::HostTensor::full(type, std::move(sizes), f.u);
  return epgraph::HostTensor::full(type, std::move(sizes), f.i);
}

int show(const std::string& file) {
  const auto ep = load(file);
  if (is_archive(file)) {
    const std::vector<std::string> programs = epgraph::archive::archive_programs(file);
    if (programs.size() > 1) {
      std::cout << "# programs:";
      for (std::size_t i = 0; i < programs.size(); ++i) {
        std::cout << (i == 0 ? " " : ", ") << programs[i];
      }
      std::cout << " (shown: " << ep.metadata().archive->model_name << ")\n";
    }
  }
  std::cout << epgraph::to_string(ep.graph()) << "\n" << epgraph::to_string(ep.graph_signature());
  return 0;
}

// `validate --data`: reads every entry of the archive `file` through to its end, checking its
// CRC and size (what loading, which reads weights lazily, and a raw copy do not do). Prints one
// line; throws archive_error naming the first bad entry.
void check_archive_data(const std::string& file) {
  const epgraph::archive::zip_reader zip(file);
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < zip.entries().size(); ++i) {
    zip.check_data(i);
    bytes += zip.entries()[i].size;
  }
  std::cout << "data: " << zip.entries().size() << " entries, " << bytes
            << " bytes, every CRC and size checked\n";
}

// `validate --meta`: propagate_meta's check of every node's stored value, nested graphs
// included (materialized from their records first). Prints the counts, each
// node whose stored value differs (both values), each node whose op refuses its arguments (torch's
// message), and each node it cannot compute: those of an op without a rule once per target with
// their count, the others one by one with the reason. Returns whether no value differs and no op
// refuses its arguments.
template <class Program>
bool check_meta(Program& ep) {
  // the nested graphs kept as records (cond's branches, map's body) made Graphs it can enter
  (void)epgraph::json::materialize_nested_graphs(ep);
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  std::cout << "meta: nodes=" << r.nodes << " computed=" << r.computed << " equal=" << r.equal
            << " differ=" << r.differences.size() << " uncomputed=" << r.uncomputed.size()
            << " invalid=" << r.invalid.size() << "\n";
  for (const epgraph::MetaDifference& d : r.differences) {
    std::cout << "meta: node '" << d.node << "' (" << d.target
              << ") stored: " << epgraph::value_text(d.stored)
              << " computed: " << epgraph::value_text(d.computed) << "\n";
  }
  for (const epgraph::MetaDifference& d : r.invalid)
    std::cout << "meta: invalid: " << d.reason << "\n";
  std::vector<std::pair<std::string, std::size_t>> no_rule;  // in order of first appearance
  for (const epgraph::MetaDifference& d : r.uncomputed) {
    if (d.reason.find("epgraph has no shape rule") == std::string::npos) {
      std::cout << "meta: not computed: " << d.reason << "\n";
      continue;
    }
    auto it = std::find_if(no_rule.begin(), no_rule.end(),
                           [&](const auto& t) { return t.first == d.target; });
    if (it == no_rule.end()) {
      no_rule.emplace_back(d.target, 1);
      std::cout << "meta: not computed: " << d.reason << "\n";
    } else {
      ++it->second;
    }
  }
  for (const auto& [target, count] : no_rule) {
    std::cout << "meta: no value computed for " << count << " node(s) of " << target << "\n";
  }
  return r.differences.empty() && r.invalid.empty();
}

int validate(const std::string& file, bool strict, bool data, bool meta) {
  auto ep = load(file);
  if (data && is_archive(file)) check_archive_data(file);
  if (data && !is_archive(file)) {
    std::cout << "note: " << file << " is a JSON record: --data has no entries to check\n";
  }
  epgraph::VerifyOptions options;
  if (strict) options.level = epgraph::VerifyLevel::canonical_order;
  if (!is_archive(file)) {
    options.check_state = false;
    std::cout << "note: " << file
              << " is a JSON record, which holds no weights: state_dict/constants checks skipped\n";
  } else if (is_legacy(ep)) {
    options.check_state = false;
    std::cout << "note: " << file
              << " is a legacy archive, whose weights are pickles epgraph does not read: "
                 "state_dict/constants checks skipped\n";
  }
  try {
    epgraph::verify(ep, options);
  } catch (const epgraph::verification_error& e) {
    std::cout << e.what() << "\n";
    return 1;
  }
  const std::vector<std::string> departures =
      strict ? std::vector<std::string>{} : epgraph::input_order_departures(ep.graph_signature());
  if (!departures.empty()) {
    std::cout << "warning: " << file
              << " departs from torch's canonical input order (torch loads and verifies it; "
                 "PyTorch's NativeRT runtime refuses it; --strict makes this an error):\n";
    for (const std::string& d : departures) std::cout << "  - " << d << "\n";
  }
  if (!meta) {
    std::cout << "OK: " << file << " passes every check of verify\n";
    return 0;
  }
  if (!check_meta(ep)) {
    std::cout << "FAILED: " << file
              << " passes every check of verify, but --meta finds stored values that differ "
                 "from what their ops compute, or ops that refuse their arguments\n";
    return 1;
  }
  std::cout << "OK: " << file << " passes every check of verify and --meta\n";
  return 0;
}

// Reads the value of option `a` at argv[i + 1] into `value` (advancing i): false, having said
// why, when it is missing or is another option of the command (`--name --dtype f32`) or when
// the option was given before (`value` not empty).
bool option_value(int argc, char** argv, int& i, const std::string& cmd, const std::string& a,
                  std::string& value) {
  if (!value.empty()) {
    std::cerr << "error: " << cmd << ": " << a << " given twice\n";
    return false;
  }
  const std::string next = i + 1 < argc ? argv[i + 1] : "";
  if (i + 1 >= argc || (next.size() > 1 && next[0] == '-' && next != "-")) {
    std::cerr << "error: " << cmd << ": " << a << " needs a value"
              << (i + 1 < argc ? " (got the option '" + next + "')" : std::string()) << "\n";
    return false;
  }
  value = argv[++i];
  return true;
}

int add_buffer(int argc, char** argv) {
  const std::string file = argv[2];
  if (!file.empty() && file[0] == '-') {
    std::cerr << "error: add-buffer needs FILE before its options\n";
    return usage();
  }
  std::string name, dtype_name = "float32", shape, out;
  std::string fill = "0";
  std::vector<std::string> given;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a != "--name" && a != "--dtype" && a != "--shape" && a != "--fill" && a != "-o") {
      return unknown_option("add-buffer", a);
    }
    if (std::find(given.begin(), given.end(), a) != given.end()) {
      std::cerr << "error: add-buffer: " << a << " given twice\n";
      return usage();
    }
    given.push_back(a);
    std::string value;  // (a negative --fill is a value, not an option)
    if (a == "--fill" && i + 1 < argc) {
      value = argv[++i];
    } else if (!option_value(argc, argv, i, "add-buffer", a, value)) {
      return usage();
    }
    if (a == "--name")
      name = value;
    else if (a == "--dtype")
      dtype_name = value;
    else if (a == "--shape")
      shape = value;
    else if (a == "--fill")
      fill = value;
    else
      out = value;
  }
  for (const auto& [value, option] : {std::pair<const std::string&, const char*>{name, "--name"},
                                      {shape, "--shape"},
                                      {out, "-o"}}) {
    if (value.empty()) {
      std::cerr << "error: add-buffer needs " << option << "\n";
      return usage();
    }
  }
  const epgraph::dtype type = epgraph::parse_dtype(dtype_name);
  std::vector<std::int64_t> sizes = parse_shape(shape);
  const Fill value = parse_fill(fill);
  // The program is read before the buffer's data are made: a missing or bad FILE is reported
  // at once, not after allocating and filling a large buffer.
  auto ep = load(file);
  epgraph::HostTensor data;
  try {
    data = fill_tensor(type, std::move(sizes), value);
  } catch (const std::bad_alloc&) {
    throw epgraph::value_error("--shape '" + shape + "': the buffer's " + dtype_name +
                               " data does not fit in memory");
  }
  // torch.fx's namespace renames a name that is taken (`linear` -> `linear_1`) or that Python
  // cannot use (`0_cache` -> `_0_cache`): the user asked for this name, so that is an error.
  const epgraph::Node* clash = ep.graph().find_node(name);
  const std::string clash_op =
      clash == nullptr ? std::string() : std::string(epgraph::op_name(clash->op()));
  epgraph::Node* node = epgraph::create_mutable_buffer(ep, name, std::move(data));
  if (node->name() != name) {
    throw epgraph::value_error(
        "add-buffer: --name '" + name + "': " +
        (clash != nullptr
             ? "the graph has a " + clash_op + " node named '" + name + "' already"
             : std::string(
                   "torch.fx does not keep this name (a Python keyword or builtin, or not an "
                   "identifier)")) +
        ", so the buffer would be named '" + std::string(node->name()) +
        "'; pick another name (nothing written)");
  }
  if (!save(ep, file, out)) {
    std::cout << "note: " << out << " is a JSON record: the new buffer's data is not in it\n";
  } else if (is_legacy(ep)) {
    std::cout << "note: " << out
              << " is a legacy archive: the new buffer's data is written next to its pickled "
                 "state dict, where torch.export.load does not look\n";
  }
  std::cout << "added buffer placeholder '" << node->name() << "' -> " << out << "\n";
  return 0;
}

// `copy FILE -o OUT` (the option before or after FILE).
int copy(int argc, char** argv) {
  std::string file, out;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-o") {
      if (!option_value(argc, argv, i, "copy", a, out)) return usage();
    } else if (!a.empty() && a[0] == '-') {
      return unknown_option("copy", a);
    } else if (file.empty()) {
      file = a;
    } else {
      std::cerr << "error: copy: unexpected argument '" << a << "' (FILE is '" << file << "')\n";
      return usage();
    }
  }
  if (file.empty() || out.empty()) {
    std::cerr << "error: copy needs FILE -o OUT\n";
    return usage();
  }
  const auto ep = load(file);
  save(ep, file, out);
  std::cout << "copied " << file << " -> " << out << "\n";
  return 0;
}

// The options `partition` and `extract` share (and extract's own when `extract`).
struct PartitionArgs {
  std::string file, out;
  std::string list_option;           // "--ops" or "--except"
  std::vector<std::string> targets;  // its items, in order
  std::string op_namespace, extract_dir;
  epgraph::PartitionerOptions options;
};

// `--ops T1,T2`: the items, each trimmed of surrounding blanks ("T1, T2" is what people type).
// An empty item ("T1,,T2", "", a trailing comma) or one with a blank inside is refused, by
// value_error naming the option and the item's position.
std::vector<std::string> parse_target_list(const std::string& option, const std::string& text) {
  std::vector<std::string> items;
  constexpr const char* blanks = " \t";
  for (std::size_t pos = 0;;) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string raw = text.substr(pos, comma - pos);
    const std::size_t first = raw.find_first_not_of(blanks);
    const std::string item = first == std::string::npos
                                 ? std::string()
                                 : raw.substr(first, raw.find_last_not_of(blanks) - first + 1);
    const std::string where = option + " '" + text + "': item " + std::to_string(items.size() + 1);
    if (item.empty()) throw epgraph::value_error(where + " is empty");
    if (item.find_first_of(" \t\n\r") != std::string::npos) {
      throw epgraph::value_error(where + " '" + item + "' has a blank inside");
    }
    items.push_back(item);
    if (comma == text.size()) break;
    pos = comma + 1;
  }
  return items;
}

// Parses argv[2..] into `a`; prints the error and returns false on a bad argument (an unknown
// or repeated option, an empty value, both or neither of --ops and --except). A malformed target
// list throws value_error (parse_target_list).
bool parse_partition_args(int argc, char** argv, const char* cmd, bool extract, PartitionArgs& a) {
  a.options.allows_single_node_partition = true;
  std::set<std::string> seen;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool valued = arg == "--ops" || arg == "--except" || arg == "-o" ||
                        (extract && (arg == "--op-namespace" || arg == "--extract-dir"));
    if (arg == "--no-single-node") {
      a.options.allows_single_node_partition = false;
    } else if (arg == "--skip-horizontal-fusion") {
      a.options.skip_horizontal_fusion = true;
    } else if (valued) {
      if (i + 1 >= argc) {
        std::cerr << "error: " << cmd << ": " << arg << " needs a value\n";
        return false;
      }
      if (!seen.insert(arg).second) {
        std::cerr << "error: " << cmd << ": " << arg << " given twice\n";
        return false;
      }
      const std::string value = argv[++i];
      if (arg == "--ops" || arg == "--except") {
        a.list_option = arg;
        a.targets = parse_target_list(arg, value);
        continue;
      }
      if (value.empty()) {
        std::cerr << "error: " << cmd << ": " << arg << " needs a non-empty value\n";
        return false;
      }
      (arg == "-o" ? a.out : arg == "--op-namespace" ? a.op_namespace : a.extract_dir) = value;
    } else if (a.file.empty() && !arg.empty() && arg[0] != '-') {
      a.file = arg;
    } else if (!arg.empty() && arg[0] == '-') {
      unknown_option(cmd, arg);
      return false;
    } else {
      std::cerr << "error: " << cmd << ": unexpected argument '" << arg << "'\n";
      return false;
    }
  }
  if (seen.count("--ops") != 0 && seen.count("--except") != 0) {
    std::cerr << "error: " << cmd << ": give one of --ops, --except, not both\n";
    return false;
  }
  if (a.file.empty() || a.list_option.empty()) {
    std::cerr << "error: " << cmd << " needs FILE and one of --ops, --except\n";
    return false;
  }
  return true;
}

// `torch.ops.NS.OP` or `torch.ops.NS.OP.OVERLOAD`, each part a Python identifier: the name of
// an operator torch can have, whether or not this graph calls it.
bool is_torch_op_name(const std::string& t) {
  if (t.rfind("torch.ops.", 0) != 0) return false;
  std::size_t parts = 0;
  for (std::size_t pos = 0;; ++parts) {
    const std::size_t dot = std::min(t.find('.', pos), t.size());
    const std::string part = t.substr(pos, dot - pos);
    if (part.empty() || std::isdigit(static_cast<unsigned char>(part[0])) != 0 ||
        part.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
            std::string::npos) {
      return false;
    }
    if (dot == t.size()) break;
    pos = dot + 1;
  }
  return parts + 1 == 4 || parts + 1 == 5;
}

// Why `t`, a well-formed torch operator name (is_torch_op_name) no node of the graph calls, names
// no operator of torch: "unknown operator 'torch.ops.aten.not_an_op' (torch 2.13.0 has no
// aten::not_an_op)" or "unknown overload 'torch.ops.aten.relu.Foo' (aten::relu has the overloads
// default, out, ...)". Empty when it is one, or when epgraph cannot tell: only the aten and
// prims namespaces are in the schema table (epgraph/ops/aten_schemas.hpp).
std::string unknown_operator(const std::string& t) {
  const std::string rest = t.substr(std::string("torch.ops.").size());
  const std::size_t d1 = rest.find('.');
  const std::string ns = rest.substr(0, d1);
  if (ns != "aten" && ns != "prims") return {};
  const std::size_t d2 = rest.find('.', d1 + 1);
  const std::string op = rest.substr(d1 + 1, d2 == std::string::npos ? d2 : d2 - d1 - 1);
  const std::string packet = ns + "::" + op;
  std::vector<std::string> overloads;
  for (const std::string& name : epgraph::global_registry().qualified_names()) {
    if (name == packet) overloads.emplace_back("default");
    if (name.size() > packet.size() && name.compare(0, packet.size() + 1, packet + ".") == 0) {
      overloads.push_back(name.substr(packet.size() + 1));
    }
  }
  const std::string version(epgraph::aten_schemas_torch_version);
  if (overloads.empty()) {
    return "unknown operator '" + t + "' (torch " + version + " has no " + packet + ")";
  }
  if (d2 == std::string::npos) return {};
  const std::string overload = rest.substr(d2 + 1);
  if (std::find(overloads.begin(), overloads.end(), overload) != overloads.end()) return {};
  std::string list;
  for (std::size_t i = 0; i < overloads.size() && i < 8; ++i) {
    list += (i == 0 ? "" : ", ") + overloads[i];
  }
  if (overloads.size() > 8) list += ", ...";
  return "unknown overload '" + t + "' (" + packet + " has the overloads " + list + ")";
}

// The backend's support: the call_function nodes of the --ops targets, or every call_function
// node but those of the --except targets. Each target is checked against the graph first: one
// that no call_function node has is an error (value_error naming it, with the name the graph
// uses when it ends like it, e.g. 'aten.linear.default' -> 'torch.ops.aten.linear.default', else
// the first targets the graph calls), unless it is a well-formed torch operator name
// (is_torch_op_name): a backend's fixed list of ops need not all be in every model, so that one
// only gets a note on stderr. A typo then no longer partitions nothing in silence. An aten or
// prims name that torch has no such operator or overload of is an error too (unknown_operator).
epgraph::OperatorSupport partition_support(const PartitionArgs& a, const epgraph::Graph& graph) {
  std::vector<std::string> called;  // distinct call_function targets, in graph order
  std::set<std::string> called_set;
  for (const epgraph::Node& n : graph.nodes()) {
    if (n.op() != epgraph::OpCode::call_function) continue;
    std::string name = epgraph::qualified_target_name(n);
    if (called_set.insert(name).second) called.push_back(std::move(name));
  }
  for (const std::string& t : a.targets) {
    const epgraph::OperatorSupport one = epgraph::supports_targets({t});
    const bool used = std::any_of(graph.nodes().begin(), graph.nodes().end(),
                                  [&](const epgraph::Node& n) { return one.is_node_supported(n); });
    if (used) continue;
    if (is_torch_op_name(t)) {
      const std::string unknown = unknown_operator(t);
      if (!unknown.empty()) throw epgraph::value_error(a.list_option + ": " + unknown);
      std::cerr << "note: " << a.list_option << ": no call_function node of the graph has target '"
                << t << "'\n";
      continue;
    }
    std::string hint;
    for (const std::string& c : called) {  // the name, or its overload packet, ends like `t`
      const std::string packet = c.rfind("torch.ops.", 0) == 0 ? c.substr(0, c.rfind('.')) : c;
      for (const std::string& full : {c, packet}) {
        const std::size_t at = full.size() - std::min(full.size(), t.size());
        if (full.size() > t.size() && full.compare(at, t.size(), t) == 0 &&
            (full[at - 1] == '.' || full[at - 1] == '_') && hint.empty()) {
          hint = " (did you mean '" + full + "'?)";
        }
      }
    }
    if (hint.empty()) {
      hint =
          " (targets are written as torch prints them: 'torch.ops.aten.linear.default', or "
          "'torch.ops.aten.linear' for every overload; the graph calls ";
      for (std::size_t i = 0; i < called.size() && i < 5; ++i) {
        hint += (i == 0 ? "" : ", ") + called[i];
      }
      hint += (called.size() > 5 ? ", ...)" : called.empty() ? "nothing)" : ")");
    }
    throw epgraph::value_error(a.list_option + ": no call_function node of the graph has target '" +
                               t + "'" + hint);
  }
  epgraph::OperatorSupport support = epgraph::supports_targets(a.targets);
  if (a.list_option == "--except") {
    support = epgraph::create_op_support([excluded = support](const epgraph::Node& n) {
      return n.op() == epgraph::OpCode::call_function && !excluded.is_node_supported(n);
    });
  }
  return support;
}

// `partition`: see the header comment.
int partition(int argc, char** argv) {
  PartitionArgs a;
  if (!parse_partition_args(argc, argv, "partition", false, a)) return usage();
  auto ep = load(a.file);
  const epgraph::CapabilityBasedPartitioner partitioner(
      ep.graph(), partition_support(a, ep.graph()), a.options);
  const std::vector<epgraph::Partition> partitions = partitioner.propose_partitions();
  for (const epgraph::Partition& p : partitions) {
    std::cout << "partition " << p.id << ":";
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      std::cout << (i == 0 ? " " : ", ") << p.nodes[i]->name();
    }
    std::cout << "\n";
  }
  if (!a.out.empty()) {
    epgraph::tag_partitions(ep.graph(), partitions);
    save(ep, a.file, a.out);
    std::cout << "tagged " << partitions.size() << " partition(s) -> " << a.out << "\n";
  }
  return 0;
}

// `--dim s70=16`: a symbol name and a decimal integer (optional sign). Throws value_error naming
// the option.
std::pair<std::string, std::int64_t> parse_dim(const std::string& text) {
  const std::size_t eq = text.find('=');
  const std::string value = eq == std::string::npos ? std::string() : text.substr(eq + 1);
  const std::size_t first = (!value.empty() && (value[0] == '-' || value[0] == '+')) ? 1 : 0;
  if (eq == std::string::npos || eq == 0 || first >= value.size() ||
      value.find_first_not_of("0123456789", first) != std::string::npos) {
    throw epgraph::value_error("--dim '" + text + "': expected SYMBOL=VALUE, e.g. s70=16");
  }
  errno = 0;
  const long long v = std::strtoll(value.c_str(), nullptr, 10);
  if (errno == ERANGE) throw epgraph::value_error("--dim '" + text + "': value out of range");
  return {text.substr(0, eq), static_cast<std::int64_t>(v)};
}

std::string names_text(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// `specialize`: see the header comment.
int specialize(int argc, char** argv) {
  std::string file, out;
  std::vector<std::pair<std::string, std::int64_t>> dims;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dim") {
      std::string dim;
      if (!option_value(argc, argv, i, "specialize", a, dim)) return usage();
      dims.push_back(parse_dim(dim));
    } else if (a == "-o") {
      if (!option_value(argc, argv, i, "specialize", a, out)) return usage();
    } else if (file.empty() && !a.empty() && a[0] != '-') {
      file = a;
    } else if (!a.empty() && a[0] == '-' && a != "--dim" && a != "-o") {
      return unknown_option("specialize", a);
    } else {
      std::cerr << "error: specialize: unexpected argument '" << a << "'\n";
      return usage();
    }
  }
  if (file.empty()) {
    std::cerr << "error: specialize needs FILE and at least one --dim SYMBOL=VALUE\n";
    return usage();
  }
  auto ep = load(file);
  if (dims.empty()) {  // say which symbols there are: `show` prints the graph only, as torch
    std::string symbols;
    for (const epgraph::RangeConstraint& c :
         epgraph::specializable_symbols(ep.metadata().range_constraints)) {
      symbols += (symbols.empty() ? "" : ", ") + c.symbol + " [" +
                 (c.min_val ? std::to_string(*c.min_val) : std::string("-int_oo")) + ", " +
                 (c.max_val ? std::to_string(*c.max_val) : std::string("int_oo")) + "]";
    }
    std::cerr << "error: specialize needs at least one --dim SYMBOL=VALUE ("
              << (symbols.empty() ? std::string("the program has no symbols to fix")
                                  : "the symbols of " + file + ": " + symbols)
              << ")\n";
    return usage();
  }
  // the nested graphs kept as records (cond's branches, map's body) made Graphs, so that they
  // are specialized too and saved from them
  (void)epgraph::json::materialize_nested_graphs(ep);
  const epgraph::SpecializeReport r = epgraph::specialize(ep, dims);
  for (const epgraph::SpecializedSymbol& s : r.symbols) {
    std::cout << "specialized " << s.symbol << " = " << s.value << " (range ["
              << (s.min_val ? std::to_string(*s.min_val) : std::string("-int_oo")) << ", "
              << (s.max_val ? std::to_string(*s.max_val) : std::string("int_oo")) << "])\n";
  }
  std::cout << "folded " << r.folded.size() << " SymInt/SymBool node(s)";
  if (!r.folded.empty()) std::cout << ": " << names_text(r.folded);
  std::cout << "\n";
  if (!r.kept_for_output.empty()) {
    std::cout << "kept " << r.kept_for_output.size()
              << " constant node(s) the output returns: " << names_text(r.kept_for_output) << "\n";
  }
  std::cout << "removed " << r.asserts_removed.size() << " runtime assert(s)";
  if (!r.asserts_removed.empty()) std::cout << ": " << names_text(r.asserts_removed);
  std::cout << "\n";
  if (!r.conds_inlined.empty()) {
    std::cout << "took the branch of " << r.conds_inlined.size()
              << " cond(s) whose predicate became constant: " << names_text(r.conds_inlined)
              << "\n";
  }
  std::cout << "dropped " << r.constraints_dropped.size()
            << " range constraint(s): " << names_text(r.constraints_dropped) << "\n";
  std::cout << "meta: recomputed=" << r.recomputed << " changed=" << r.recomputed_changed
            << " substituted_only=" << r.substituted_only.size()
            << " symbolic_values=" << r.symbolic_values << "\n";
  if (!r.substituted_only.empty()) {
    std::cout << "meta: no rule, value substituted: " << names_text(r.substituted_only) << "\n";
  }
  if (!r.changed.empty()) {
    // The value torch stored (with the symbols substituted) and the one epgraph's rules compute
    // disagree: one of them is wrong, and the program is not written with either.
    std::cerr << "error: specialize: the recomputed value of " << r.changed.size()
              << " node(s) differs from the value stored in " << file
              << " with the symbols substituted: " << names_text(r.changed)
              << (out.empty() ? std::string() : "; " + out + " not written") << "\n";
    return 1;
  }
  if (!out.empty()) {
    save(ep, file, out);
    std::cout << "specialized -> " << out << "\n";
  } else {
    std::cout << "nothing written (no -o OUT: a dry run)\n";
  }
  return 0;
}

std::string joined_names(const std::vector<const epgraph::Node*>& nodes) {
  std::string out;
  for (const epgraph::Node* n : nodes) out += (out.empty() ? "" : ", ") + std::string(n->name());
  return out;
}

// The order in which `extract` replaces the partitions: a partition reading another's value
// first (consumers before producers), so that every partition's boundary is still made of the
// original nodes when its turn comes (its inputs are not yet getitems of another call, and the
// names in the op's schema are those of the extracted program's inputs). Partitions of one
// proposal never form a cycle (the partitioner keeps the fused graph acyclic); ties go by id.
std::vector<std::size_t> replacement_order(const std::vector<epgraph::Partition>& parts) {
  std::unordered_map<const epgraph::Node*, std::size_t> owner;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    for (const epgraph::Node* n : parts[i].nodes) owner.emplace(n, i);
  }
  std::vector<std::set<std::size_t>> readers(parts.size());  // i -> partitions reading i
  std::vector<std::size_t> pending(parts.size(), 0);         // partitions i reads, not yet done
  for (std::size_t i = 0; i < parts.size(); ++i) {
    for (const epgraph::Node* n : parts[i].nodes) {
      for (const epgraph::Node* u : n->users()) {
        const auto it = owner.find(u);
        if (it != owner.end() && it->second != i && readers[i].insert(it->second).second) {
          ++pending[i];
        }
      }
    }
  }
  // pending[i]: how many partitions read i and are not replaced yet; i goes once it is 0.
  std::vector<std::size_t> order;
  std::vector<bool> done(parts.size(), false);
  while (order.size() < parts.size()) {
    std::size_t next = parts.size();
    for (std::size_t i = 0; i < parts.size() && next == parts.size(); ++i) {
      if (!done[i] && pending[i] == 0) next = i;
    }
    if (next == parts.size()) throw epgraph::runtime_error("extract: the partitions form a cycle");
    done[next] = true;
    order.push_back(next);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (readers[i].count(next) != 0) --pending[i];
    }
  }
  return order;
}

// Checks, before anything is read or written, that `extract` can write where it is told:
// --extract-dir DIR is a directory or can be made one (it and its missing parents are created
// later; a part of it that exists must be a directory), and -o HOST's directory exists (as
// save requires). Throws value_error naming the option and the path.
void check_extract_paths(const PartitionArgs& a) {
  namespace fs = std::filesystem;
  for (fs::path p = a.extract_dir; !p.empty(); p = p.parent_path()) {
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (fs::exists(st)) {
      if (!fs::is_directory(st)) {
        throw epgraph::value_error("extract: --extract-dir '" + a.extract_dir + "': '" +
                                   p.string() + "' is a file, not a directory");
      }
      break;
    }
    if (p == p.parent_path()) break;
  }
  const fs::path host_dir = fs::path(a.out).parent_path();
  std::error_code ec;
  if (!host_dir.empty() && !fs::is_directory(host_dir, ec)) {
    throw epgraph::value_error("extract: -o '" + a.out + "': directory '" + host_dir.string() +
                               "' does not exist");
  }
}

// `extract`: see the header comment.
int extract(int argc, char** argv) {
  PartitionArgs a;
  if (!parse_partition_args(argc, argv, "extract", true, a)) return usage();
  if (a.out.empty() || a.op_namespace.empty() || a.extract_dir.empty()) {
    std::cerr << "error: extract needs --op-namespace NS, -o HOST and --extract-dir DIR\n";
    return usage();
  }
  check_extract_paths(a);
  auto ep = load(a.file);
  const epgraph::CapabilityBasedPartitioner partitioner(
      ep.graph(), partition_support(a, ep.graph()), a.options);
  const std::vector<epgraph::Partition> partitions = partitioner.propose_partitions();
  // Everything is checked and computed before any file is written.
  std::vector<std::string> paths;
  for (const epgraph::Partition& p : partitions) {
    const std::string path = a.extract_dir + "/subgraph_" + std::to_string(p.id) + ".pt2";
    if (std::filesystem::exists(path)) {
      throw epgraph::value_error("extract: " + path +
                                 " exists (not overwritten: remove it or give another " +
                                 "--extract-dir; other files in the directory do not matter)");
    }
    if (std::filesystem::weakly_canonical(path) == std::filesystem::weakly_canonical(a.out)) {
      throw epgraph::value_error("extract: -o " + a.out + " is the file of partition " +
                                 std::to_string(p.id));
    }
    paths.push_back(path);
  }
  std::vector<std::vector<std::string>> names;  // node names per partition
  std::vector<std::string> lines;
  std::vector<epgraph::ExportedProgram<epgraph::HostTensor>> extracted;
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    const std::vector<const epgraph::Node*> nodes(partitions[i].nodes.begin(),
                                                  partitions[i].nodes.end());
    const epgraph::PartitionBoundary b = epgraph::partition_boundary(ep, nodes);
    extracted.push_back(epgraph::extract_partition(ep, nodes));
    names.emplace_back();
    for (const epgraph::Node* n : nodes) names.back().emplace_back(n->name());
    lines.push_back("partition " + std::to_string(partitions[i].id) + ": " + a.op_namespace +
                    "::subgraph_" + std::to_string(partitions[i].id) + " inputs=[" +
                    joined_names(b.user_inputs) + "] weights=[" + joined_names(b.state_inputs) +
                    "] outputs=[" + joined_names(b.outputs) + "] -> " + paths[i]);
  }
  for (const std::size_t i : replacement_order(partitions)) {
    std::vector<const epgraph::Node*> nodes;
    for (const std::string& n : names[i]) nodes.push_back(ep.graph().find_node(n));
    epgraph::replace_partition_with_call(
        ep, nodes, a.op_namespace + "::subgraph_" + std::to_string(partitions[i].id));
  }
  if (!partitions.empty()) std::filesystem::create_directories(a.extract_dir);
  for (std::size_t i = 0; i < partitions.size(); ++i) save(extracted[i], a.file, paths[i]);
  save(ep, a.file, a.out);
  for (const std::string& line : lines) std::cout << line << "\n";
  std::cout << "replaced " << partitions.size() << " partition(s) -> " << a.out << "\n";
  return 0;
}

// `outline`: see the header comment.
int outline(int argc, char** argv) {
  PartitionArgs a;
  if (!parse_partition_args(argc, argv, "outline", false, a)) return usage();
  if (a.out.empty()) {
    std::cerr << "error: outline needs -o OUT\n";
    return usage();
  }
  auto ep = load(a.file);
  const epgraph::CapabilityBasedPartitioner partitioner(
      ep.graph(), partition_support(a, ep.graph()), a.options);
  const std::vector<epgraph::Partition> partitions = partitioner.propose_partitions();
  std::vector<std::vector<std::string>> names;  // node names per partition
  for (const epgraph::Partition& p : partitions) {
    names.emplace_back();
    for (const epgraph::Node* n : p.nodes) names.back().emplace_back(n->name());
  }
  // In id order: outlining a partition leaves the nodes of the others (and their names) as they
  // were, so each boundary is still the one the partitioner saw. An operand another partition
  // produces becomes that partition's getitem when the producer is outlined later: the operands
  // are printed from the final graph.
  std::vector<std::string> call_names;
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    std::vector<const epgraph::Node*> nodes;
    for (const std::string& n : names[i]) nodes.push_back(ep.graph().find_node(n));
    call_names.emplace_back(epgraph::outline_partition(ep, nodes)->name());
  }
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    const epgraph::Node* call = ep.graph().find_node(call_names[i]);
    const epgraph::ArgumentView args = call->args();
    std::vector<const epgraph::Node*> operands;
    for (std::size_t k = 2; k < args.size(); ++k) operands.push_back(args[k].node());
    std::vector<const epgraph::Node*> outputs;  // what the nested graph returns
    const epgraph::Graph& sub = *ep.nested_graph(args[0].node()->target());
    for (const epgraph::Argument& r : *sub.output_node()->args()[0].list()) {
      outputs.push_back(r.node());
    }
    lines.push_back("partition " + std::to_string(partitions[i].id) + ": invoke_subgraph(" +
                    std::string(args[0].node()->target()) + ", '" + args[1].as<std::string>() +
                    "') operands=[" + joined_names(operands) + "] outputs=[" +
                    joined_names(outputs) + "] -> " + call_names[i]);
  }
  save(ep, a.file, a.out);
  for (const std::string& line : lines) std::cout << line << "\n";
  std::cout << "outlined " << partitions.size() << " partition(s) -> " << a.out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef SIGXFSZ
  // A write past the file-size limit (ulimit -f) then fails with EFBIG and is reported, the
  // temporary file removed and the output untouched, instead of the signal killing the tool
  // with its temporary files left behind.
  (void)std::signal(SIGXFSZ, SIG_IGN);
#endif
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return usage(std::cout, 0);
  }
  if (!take_program_option(argc, argv) || argc < 3) return usage();
  const std::string cmd = argv[1];
  try {
    if (cmd == "show") {
      for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (!a.empty() && a[0] == '-') return unknown_option("show", a);
      }
      if (argc != 3) {
        std::cerr << "error: show needs one FILE\n";
        return usage();
      }
      return show(argv[2]);
    }
    if (cmd == "validate") {  // FILE and the options in any order
      std::string file;
      bool strict = false, data = false, meta = false;
      for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--strict") {
          strict = true;
        } else if (a == "--data") {
          data = true;
        } else if (a == "--meta") {
          meta = true;
        } else if (file.empty() && !a.empty() && a[0] != '-') {
          file = a;
        } else if (!a.empty() && a[0] == '-') {
          return unknown_option("validate", a);
        } else {
          std::cerr << "error: validate: unexpected argument '" << a << "'\n";
          return usage();
        }
      }
      if (file.empty()) {
        std::cerr << "error: validate needs FILE\n";
        return usage();
      }
      return validate(file, strict, data, meta);
    }
    if (cmd == "add-buffer") return add_buffer(argc, argv);
    if (cmd == "copy") return copy(argc, argv);
    if (cmd == "partition") return partition(argc, argv);
    if (cmd == "specialize") return specialize(argc, argv);
    if (cmd == "extract") return extract(argc, argv);
    if (cmd == "outline") return outline(argc, argv);
    std::cerr << "pt2_edit: unknown command '" << cmd << "'\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return usage();
}
