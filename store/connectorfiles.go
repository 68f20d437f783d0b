package store

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/quarryhq/quarry"
)

// The files of a file connector (Onyx's GET
// /manage/admin/connector/{connector_id}/files and POST .../files/update):
// who may is the root package's (quarry.Caller.CheckConnectorFiles), how
// the configuration changes too (connectorfiles.go); here the reads and
// the one transaction of a change.

// fileConnectorAccess returns the configuration of file connector id and
// its pairs, if c may list (edit false) or change its files.
func fileConnectorAccess(ctx context.Context, q querier, c *quarry.Caller, id int64, edit bool) (json.RawMessage, []*quarry.CCPair, error) {
	source, sharing, err := connectorSharing(ctx, q, id)
	if quarry.ErrorCode(err) == quarry.ENOTFOUND {
		return nil, nil, quarry.ErrConnectorFilesNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	pairs, err := connectorPairs(ctx, q, id)
	if err != nil {
		return nil, nil, err
	}
	if err := c.CheckConnectorFiles(source, sharing, pairs, edit); err != nil {
		return nil, nil, err
	}
	var config string
	if err := q.QueryRowContext(ctx, `SELECT config FROM connectors WHERE id = $1`, id).Scan(&config); err != nil {
		return nil, nil, err
	}
	return json.RawMessage(config), pairs, nil
}

// ConnectorFileList returns the files file connector id names, and the
// records the file store has of them by id, if c may list them
// (quarry.Caller.CheckConnectorFiles): a fixed number of statements per
// 500 files.
func (db *DB) ConnectorFileList(ctx context.Context, c *quarry.Caller, id int64) (*quarry.FileConnectorFiles, map[string]*quarry.File, error) {
	var (
		files   *quarry.FileConnectorFiles
		records = map[string]*quarry.File{}
	)
	err := db.snapshot(ctx, func(q querier) error {
		config, _, err := fileConnectorAccess(ctx, q, c, id, false)
		if err != nil {
			return err
		}
		files = quarry.ReadFileConnectorFiles(config)
		return inChunks(files.Locations, "id", func(cond string, args []any) error {
			found, err := queryAll(ctx, q, func(r interface{ Scan(...any) error }) (*quarry.File, error) {
				var (
					f  quarry.File
					at int64
				)
				err := r.Scan(&f.ID, &f.DisplayName, &f.FileType, &f.Origin, &f.Size, &at)
				f.CreatedAt = quarry.TimeFromMicros(at)
				return &f, err
			}, `SELECT id, display_name, file_type, origin, size, created_at FROM files WHERE `+cond, args...)
			for _, f := range found {
				records[f.ID] = f
			}
			return err
		})
	})
	if err != nil {
		return nil, nil, mapError(err)
	}
	return files, records, nil
}

// ConnectorFilesChange is a change of a file connector's files: the ids
// of files to remove, files to add, and the .onyx_metadata.json of the zip
// added, if any.
type ConnectorFilesChange struct {
	Remove   []string
	Add      []NewFile
	Metadata *NewFile
}

// UpdateConnectorFiles changes the files of file connector id as Onyx's
// update_connector_files, if c may (quarry.Caller.CheckConnectorFiles);
// prepare, called once it may, gives the change (its errors, such as a
// file_ids_to_remove that is not a list or an upload over the limits, come
// after the refusals, as in Onyx). In one transaction: the files added are
// kept, the metadata of the files removed dropped and the zip's added into
// a new .onyx_metadata.json, the configuration written, and every pair of
// the connector asked to index (files added) and to prune (files removed),
// where Onyx asks its pair; at least one file must remain. A change that
// adds, removes and merges nothing writes nothing. It returns the
// connector's files, and the files it added.
func (db *DB) UpdateConnectorFiles(ctx context.Context, c *quarry.Caller, id int64, prepare func() (*ConnectorFilesChange, error)) (*quarry.FileConnectorFiles, []quarry.File, error) {
	var (
		out   *quarry.FileConnectorFiles
		added []quarry.File
	)
	err := db.update(ctx, func(tx *Tx) error {
		config, pairs, err := fileConnectorAccess(ctx, tx, c, id, true)
		if err != nil {
			return err
		}
		ch, err := prepare()
		if err != nil {
			return err
		}
		cur := quarry.ReadFileConnectorFiles(config)
		added, err = tx.saveFiles(ctx, c, ch.Add)
		if err != nil {
			return err
		}
		var ids, names []string
		for _, f := range added {
			ids, names = append(ids, f.ID), append(names, f.DisplayName)
		}
		next, removed, gone, err := cur.Update(ch.Remove, ids, names)
		if err != nil {
			return err
		}
		if len(added) == 0 && removed == 0 && ch.Metadata == nil {
			out = cur
			return nil
		}
		next.MetadataID = cur.MetadataID
		if len(gone) > 0 || ch.Metadata != nil {
			if next.MetadataID, err = tx.mergeMetadata(ctx, c, cur.MetadataID, ch.Metadata, gone); err != nil {
				return err
			}
		}
		updated, err := next.Apply(config)
		if err != nil {
			return err
		}
		if err := tx.lockConnectorPairs(ctx, id); err != nil {
			return err
		}
		var at int64
		if err := tx.QueryRowContext(ctx, `SELECT updated_at FROM connectors WHERE id = $1`, id).Scan(&at); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE connectors SET config = $1, updated_at = $2 WHERE id = $3`,
			string(updated), later(tx.now, quarry.TimeFromMicros(at)).Micros(), id); err != nil {
			return err
		}
		tx.changed(ChangeConnector, id)
		if err := tx.audit(ctx, c, "connector.update", "connector", id, []string{"connector_specific_config"}); err != nil {
			return err
		}
		for _, p := range pairs {
			if len(added) > 0 {
				if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET indexing_trigger = COALESCE(indexing_trigger, $1) WHERE id = $2`,
					quarry.IndexUpdate, p.ID); err != nil {
					return err
				}
				if err := tx.audit(ctx, c, "cc_pair.run_once", "cc_pair", p.ID, []string{"indexing_trigger"}); err != nil {
					return err
				}
			}
			if removed > 0 {
				if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET prune_requested = TRUE WHERE id = $1`, p.ID); err != nil {
					return err
				}
				if err := tx.audit(ctx, c, "cc_pair.prune", "cc_pair", p.ID, []string{"prune_requested"}); err != nil {
					return err
				}
			}
			if err := tx.reschedule(ctx, p.ID); err != nil {
				return err
			}
		}
		out = next
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, added, nil
}

// mergeMetadata keeps, for c, the merge (quarry.MergeZipMetadata) of the
// metadata file current (nil: none) with the metadata added (nil: none),
// without the entries of the files removed, and returns its id; nil when
// the merge has no entry. A current metadata file that is gone has no
// entry, as the file connector reads it.
func (tx *Tx) mergeMetadata(ctx context.Context, c *quarry.Caller, current *string, added *NewFile, removed []string) (*string, error) {
	var cur, add []byte
	if current != nil {
		f, err := tx.db.File(ctx, *current)
		if err != nil && quarry.ErrorCode(err) != quarry.ENOTFOUND {
			return nil, err
		}
		if f != nil {
			if cur, err = readAtMost(tx.db.OpenFile(ctx, f), quarry.MaxMetadataBytes); err != nil {
				return nil, err
			}
		}
	}
	if added != nil {
		rc, err := added.Open()
		if err != nil {
			return nil, err
		}
		if add, err = readAtMost(rc, quarry.MaxMetadataBytes); err != nil {
			return nil, err
		}
	}
	merged := quarry.MergeZipMetadata(cur, add, removed)
	if merged == nil {
		return nil, nil
	}
	if len(merged) > quarry.MaxMetadataBytes {
		return nil, quarry.Errorf(quarry.EINVALID, "The connector's %s would be larger than %d bytes", quarry.OnyxMetadataFile, quarry.MaxMetadataBytes)
	}
	kept, err := tx.saveFiles(ctx, c, []NewFile{{DisplayName: quarry.OnyxMetadataFile, FileType: "application/json",
		Origin: quarry.FileOriginMetadata, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(merged)), nil }}})
	if err != nil {
		return nil, err
	}
	return &kept[0].ID, nil
}

// readAtMost reads and closes rc: what it holds, up to max bytes.
func readAtMost(rc io.ReadCloser, max int64) ([]byte, error) {
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, max))
}
