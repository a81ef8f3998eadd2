/// The naive reference (``NaiveMenu``, the seeds' design) and the ``TreeSpec`` helpers live in the
/// NaiveReference library, shared with `menu-bench`; re-exported here so every test file sees them.
@_exported import NaiveReference
