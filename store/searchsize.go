package store

import (
	"context"
	"database/sql"
)

// The size of the search index on disk, as quarry bench -op search reports
// it: read from the database's own accounting, by table name, so that it
// follows whatever tables the index is made of.

// searchTablePrefix begins the name of every table of the search index.
const searchTablePrefix = "search_"

// TableSize is a table's size on disk: its rows, its indexes and (on
// PostgreSQL) its TOAST data.
type TableSize struct {
	Name  string
	Bytes int64
}

// IndexSize is the size on disk of the search index and of the whole
// database.
type IndexSize struct {
	// Tables are the index's tables (those whose names begin with
	// "search_"), by name.
	Tables []TableSize
	// IndexBytes is the sum of Tables.
	IndexBytes int64
	// DatabaseBytes is the whole database's: on SQLite its pages (the
	// file, free pages included; not the write-ahead log), on PostgreSQL
	// pg_database_size.
	DatabaseBytes int64
}

// SearchIndexSize returns the size on disk of the search index's tables
// and of the whole database. On SQLite a table's size is the pages of its
// b-trees and of its indexes' (the dbstat table); on PostgreSQL it is
// pg_total_relation_size.
func (db *DB) SearchIndexSize(ctx context.Context) (IndexSize, error) {
	var out IndexSize
	scan := func(r interface{ Scan(...any) error }) (TableSize, error) {
		var t TableSize
		return t, r.Scan(&t.Name, &t.Bytes)
	}
	var (
		err  error
		size *sql.Row
	)
	if db.dialect == Postgres {
		out.Tables, err = queryAll(ctx, db.read, scan, `SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
			WHERE c.relkind IN ('r', 'p') AND c.relnamespace = current_schema()::regnamespace
			AND starts_with(c.relname, $1) ORDER BY c.relname`, searchTablePrefix)
		size = db.read.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`)
	} else {
		// dbstat names each b-tree: a table's, or an index's, whose table
		// sqlite_schema gives.
		out.Tables, err = queryAll(ctx, db.read, scan, `SELECT s.tbl_name, SUM(d.pgsize) FROM dbstat d
			JOIN sqlite_schema s ON s.name = d.name
			WHERE substr(s.tbl_name, 1, length($1)) = $1 GROUP BY s.tbl_name ORDER BY s.tbl_name`, searchTablePrefix)
		size = db.read.QueryRowContext(ctx, `SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`)
	}
	if err != nil {
		return out, mapError(err)
	}
	if err := size.Scan(&out.DatabaseBytes); err != nil {
		return out, mapError(err)
	}
	for _, t := range out.Tables {
		out.IndexBytes += t.Bytes
	}
	return out, nil
}
