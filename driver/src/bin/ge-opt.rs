fn main() {
    std::process::exit(ge_driver::opt::main());
}
