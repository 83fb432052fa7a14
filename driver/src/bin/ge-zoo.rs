//! Writes the model zoo (see `ge_driver::zoo`).
fn main() {
    std::process::exit(ge_driver::zoo::cli::main());
}
