fn main() {
    std::process::exit(ge_driver::run::main());
}
