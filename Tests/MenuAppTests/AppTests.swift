import Testing

/// The parent suite of every suite in MenuAppTests, and the one hang guard of them all: a test
/// still running after ten minutes fails instead of hanging the run. A suite's time limit applies
/// to every test inside it, counted from when the run schedules the test, not from when a thread
/// of the shared pool takes it up: under the address sanitizer the suite's live tests wait up to
/// four minutes for one, so no test here states a shorter limit of its own.
@Suite(.timeLimit(.minutes(10)))
enum AppTests {}
