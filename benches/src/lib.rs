//! Benchmarks of dlspan against its peers; see `BENCHMARKS.md` at the repository root.
