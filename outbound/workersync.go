package outbound

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector"
)

// sync runs the permission sync or the group sync of lease: its connector
// lists every document's access (connector.PermissionSyncer) or its
// source's groups (connector.GroupSyncer), reported in batches within the
// server's bounds (quarry.MaxBatchAccess entries, quarry.MaxAccessEntries
// emails or groups each, a long list split across entries, and the body
// limit); the server applies them when the sync ends in success. A
// connector that cannot list them ends the attempt failed, saying so. It
// returns 1 step once the listing is done, and why it stopped (nil: done).
func (w *Worker) sync(ctx context.Context, log *slog.Logger, lease *quarry.Lease, mask *credentialMask) (int, error) {
	conn, err := w.open(ctx, log, lease, mask)
	if err != nil {
		return 0, err
	}
	field := "access"
	if lease.Kind == quarry.AttemptGroupSync {
		field = "groups"
	}
	b := &syncBatch{field: field, limits: defaultProgressLimits(), send: func(ctx context.Context, body []byte) error {
		res, err := w.cfg.API.Progress(ctx, lease.AttemptID, body)
		if err != nil {
			return err
		}
		if res.Stop {
			return errStopAsked
		}
		return nil
	}}
	switch lease.Kind {
	case quarry.AttemptGroupSync:
		gs, ok := connector.As[connector.GroupSyncer](conn)
		if !ok {
			return 0, quarry.ErrNoSyncer(lease.Connector.Source, lease.Kind)
		}
		err = gs.Groups(ctx, func(ctx context.Context, g *quarry.ExternalGroup) error {
			emails := g.UserEmails
			for first := true; first || len(emails) > 0; first = false {
				n := min(len(emails), quarry.MaxAccessEntries)
				if err := b.add(ctx, quarry.ExternalGroup{ID: g.ID, UserEmails: emails[:n:n]}); err != nil {
					return err
				}
				emails = emails[n:]
			}
			return nil
		})
	default:
		ps, ok := connector.As[connector.PermissionSyncer](conn)
		if !ok {
			return 0, quarry.ErrNoSyncer(lease.Connector.Source, lease.Kind)
		}
		err = ps.Permissions(ctx, func(ctx context.Context, id string, a *quarry.ExternalAccess) error {
			emails, groups := a.ExternalUserEmails, a.ExternalUserGroupIDs
			for first := true; first || len(emails) > 0 || len(groups) > 0; first = false {
				ne, ng := min(len(emails), quarry.MaxAccessEntries), min(len(groups), quarry.MaxAccessEntries)
				part := quarry.DocumentAccess{DocumentID: id, ExternalAccess: quarry.ExternalAccess{IsPublic: a.IsPublic,
					ExternalUserEmails: emails[:ne:ne], ExternalUserGroupIDs: groups[:ng:ng]}}
				if err := b.add(ctx, part); err != nil {
					return err
				}
				emails, groups = emails[ne:], groups[ng:]
			}
			return nil
		})
	}
	if err == nil {
		err = b.flush(ctx)
	}
	if err != nil {
		return 0, err
	}
	log.Debug("worker: sync listed its source", "kind", lease.Kind, "entries", b.sent)
	return 1, nil
}

// syncBatch gathers the entries of a sync into progress reports of one
// field, sent as soon as the next entry would not fit: a worker holds at
// most one report.
type syncBatch struct {
	field  string
	limits progressLimits
	send   func(ctx context.Context, body []byte) error
	items  []json.RawMessage
	size   int // Of the items and their commas.
	sent   int // Entries reported.
}

// add adds entry v, sending the report first if v would not fit in it.
func (b *syncBatch) add(ctx context.Context, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b.items) > 0 && (len(b.items) >= quarry.MaxBatchAccess || b.overhead()+b.size+1+len(raw) > b.limits.bytes) {
		if err := b.flush(ctx); err != nil {
			return err
		}
	}
	if len(b.items) > 0 {
		b.size++
	}
	b.items, b.size = append(b.items, raw), b.size+len(raw)
	return nil
}

// overhead is the length of a report's body without its entries.
func (b *syncBatch) overhead() int { return len(`{"":[]}`) + len(b.field) }

// flush sends the report gathered, if any.
func (b *syncBatch) flush(ctx context.Context) error {
	if len(b.items) == 0 {
		return nil
	}
	body := make([]byte, 0, b.overhead()+b.size)
	body = append(body, `{"`+b.field+`":[`...)
	for i, it := range b.items {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, it...)
	}
	body = append(body, "]}"...)
	if err := b.send(ctx, body); err != nil {
		return err
	}
	b.sent += len(b.items)
	b.items, b.size = b.items[:0], 0
	return nil
}
