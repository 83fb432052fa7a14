fn main() {
    std::process::exit(ge_driver::conformance::main());
}
