fn main() {
    std::process::exit(ge_driver::translate::main());
}
