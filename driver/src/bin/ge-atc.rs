fn main() {
    std::process::exit(ge_driver::atc::main());
}
