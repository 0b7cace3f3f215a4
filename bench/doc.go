// Package bench holds the end-to-end benchmarks of micro-rag-mcp: the raw
// embedder and tokenizer ceilings, each reader and the chunker, cold ingest
// through the real engine, no-op and 1 %-edit reindexes, search latency and
// recall at 10k–1M chunks, and ingest memory. Inputs come from the seeded
// corpus generator in bench/corpus; run them with `make bench`.
package bench
