// Package index is Quarry's search engine, without its storage: the
// chunks a document is cut into and their terms, the queries people type,
// the codec of the index's blocks, pending chunks and norms, the building
// and merging of segments and the policy of the index's upkeep, BM25
// scoring of a query over the pairs a caller may see, and highlights.
//
// It reads and writes no database: package store keeps the index's tables,
// its transactions and its locks, reads the rows a search or a merge needs
// and hands them over (Reader, Cursor), and writes what this package
// returns (Segment, Block). It imports package analysis and the standard
// library only, starts no goroutine and reads no clock.
package index
