import Testing

/// The parent suite of every suite in MenuTerminalTests, and the one hang guard of them all: a
/// test still running after ten minutes fails instead of hanging the run (menu-client in tmux
/// against a child menu-server can stall). The limit counts from when the run schedules a test,
/// not from when a thread of the shared pool takes it up (see AppTests).
@Suite(.timeLimit(.minutes(10)))
enum TerminalTests {}
