import Testing

/// The parent suite of every suite in MenuAppTests, and the one hang guard of them all: a test
/// still running after five minutes fails instead of hanging the run. A suite's time limit applies
/// to every test and suite inside it; a test that states a shorter one keeps it.
@Suite(.timeLimit(.minutes(5)))
enum AppTests {}
