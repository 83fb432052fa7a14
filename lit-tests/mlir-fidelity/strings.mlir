// MLIR fidelity: strings, symbol references, quoted names
// ge-opt's generic form is mlir-opt-22's, byte for byte: the CHECK lines are
// mlir-opt-22's output for this file (checked everywhere), where mlir-opt-22
// is installed the two outputs are compared whole, and ge-opt reads its own
// output back to the same text.
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %s > %t
// RUN: filecheck %s --input-file=%t --match-full-lines
// RUN: ge-opt --allow-unregistered-dialect --print-op-generic %t | diff %t -
// RUN: %if mlir-opt %{ %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic %s | sed '${/^$/d;}' | diff %t - %}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "x.strings"() {a = "say \22hi\22\0A\\", b = "h\C3\A9llo", c = "", d = "tab\09here", e = @sym, f = @"q s"::@n::@"x\22y", g = [@a, "x"], "q\22k" = 2 : i64, "quoted key" = 1 : i64} : () -> ()
// CHECK-NEXT:   "x.we\22ird op"() : () -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NOT: {{.}}

// Strings, symbol references and keys as LLVM's printEscapedString writes
// them: printable ASCII as is, a backslash doubled, every other byte \XX.
"x.strings"() {a = "say \"hi\"\n\\", b = "h\C3\A9llo", c = "", d = "tab\there", "quoted key" = 1, "q\"k" = 2, e = @sym, f = @"q s"::@n::@"x\"y", g = [@a, "x"]} : () -> ()
"x.we\"ird op"() : () -> ()
