package store

import (
	"context"
	"database/sql/driver"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/quarryhq/quarry"
)

// A pipe is a write transaction whose statements PostgreSQL receives
// together: the statements queued since the last send go in one round
// trip, BEGIN before the first of them and COMMIT after the last, so that
// a transaction whose statements depend on one earlier answer costs two
// round trips, not one a statement. Each statement's answer is handed to
// its callback at the send, in order. On SQLite, where a statement costs
// no round trip, and in a transaction of DB.update's (Tx.pipe), each
// runs at once and send only reports the first failure.
//
// A chat's message writes through pipes: it made 14 round trips to
// PostgreSQL besides its search's, 6 with them (docs/benchmarks.md).
type pipe struct {
	ctx   context.Context
	tx    *Tx       // SQLite: statements run at once.
	pg    *pgx.Conn // PostgreSQL: statements are queued in batch.
	batch *pgx.Batch
	then  []func(pgx.BatchResults) error
	begun bool  // BEGIN has been sent.
	err   error // The first failure.
	db    *DB
	now   quarry.Time // The transaction's time, as Tx.now.
}

// pipe returns a pipe whose statements run at once in tx.
func (tx *Tx) pipe(ctx context.Context) *pipe {
	return &pipe{ctx: ctx, tx: tx, db: tx.db, now: tx.now}
}

// piped runs fn with a pipe and commits what it queued if fn and every
// callback succeed; otherwise nothing of it is written.
func (db *DB) piped(ctx context.Context, fn func(p *pipe) error) error {
	if db.dialect != Postgres {
		return db.update(ctx, func(tx *Tx) error {
			p := tx.pipe(ctx)
			if err := fn(p); err != nil {
				return err
			}
			return p.err
		})
	}
	c, err := db.write.Conn(ctx)
	if err != nil {
		return mapError(err)
	}
	defer c.Close()
	var failed error
	err = c.Raw(func(dc any) error {
		p := &pipe{ctx: ctx, pg: dc.(*stdlib.Conn).Conn(), batch: &pgx.Batch{}, db: db, now: db.now()}
		if failed = fn(p); failed == nil {
			p.exec("COMMIT", nil, nil)
			failed = p.send()
		}
		if failed != nil && p.begun {
			if _, err := p.pg.Exec(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
				return driver.ErrBadConn // Not back to the pool inside a transaction.
			}
		}
		return nil
	})
	if failed == nil {
		failed = err
	}
	if failed != nil {
		return mapError(failed)
	}
	forgetVersion(ctx)
	return nil
}

// exec queues a statement whose answer is the rows it changed, which
// check (if not nil) is given.
func (p *pipe) exec(query string, args []any, check func(changed int64) error) {
	if p.err != nil {
		return
	}
	if p.tx != nil {
		res, err := p.tx.ExecContext(p.ctx, query, args...)
		if err == nil && check != nil {
			var n int64
			if n, err = res.RowsAffected(); err == nil {
				err = check(n)
			}
		}
		p.err = err
		return
	}
	p.db.statements.Add(1)
	p.batch.Queue(query, args...)
	p.then = append(p.then, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		if err != nil || check == nil {
			return err
		}
		return check(tag.RowsAffected())
	})
}

// query queues a statement whose rows each is given, in order.
func (p *pipe) query(query string, args []any, each func(row scanner) error) {
	if p.err != nil {
		return
	}
	if p.tx != nil {
		p.err = eachRow(p.ctx, p.tx, query, args, each)
		return
	}
	p.db.statements.Add(1)
	p.batch.Queue(query, args...)
	p.then = append(p.then, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := each(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// send sends what is queued, BEGIN first if it was not sent yet, and
// hands each statement's answer to its callback; it reports the first
// failure, of a statement or a callback, since the pipe began.
func (p *pipe) send() error {
	if p.tx != nil || p.err != nil || len(p.then) == 0 {
		return p.err
	}
	b := p.batch
	if !p.begun {
		b = &pgx.Batch{QueuedQueries: append([]*pgx.QueuedQuery{{SQL: "BEGIN"}}, p.batch.QueuedQueries...)}
	}
	then := p.then
	p.batch, p.then = &pgx.Batch{}, nil
	br := p.pg.SendBatch(p.ctx, b)
	if !p.begun {
		p.begun = true
		if _, err := br.Exec(); err != nil {
			br.Close()
			p.err = err
			return err
		}
	}
	for _, fn := range then {
		if err := fn(br); err != nil {
			br.Close()
			p.err = err
			return err
		}
	}
	p.err = br.Close()
	return p.err
}
