fn main() {
    std::process::exit(kebab::cli::main());
}
