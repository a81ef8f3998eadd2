import Testing

/// The parent suite of every suite in MenuTerminalTests, and the one hang guard of them all: a
/// test still running after five minutes fails instead of hanging the run (menu-client in tmux
/// against a child menu-server can stall). A test that states a shorter limit keeps it.
@Suite(.timeLimit(.minutes(5)))
enum TerminalTests {}
