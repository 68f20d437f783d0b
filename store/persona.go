package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry"
)

// Assistants (quarry.Persona): their rows in personas, their tools,
// document sets, shares and labels in persona_tools,
// persona_document_sets, persona_users, persona_groups and
// persona_label_links, the labels in persona_labels (migration 00024).
// The rules are the root package's (persona.go); this file reads the
// facts they need in the write's transaction, asks them, and writes.
// Assistants are never deleted but marked, so that their sessions keep
// them.

// personaColumns are the columns scanPersona reads, from personas p with
// its owner u and owner group g.
const personaColumns = `p.id, p.name, p.description, p.user_id, COALESCE(u.email, ''), p.owner_group_id, COALESCE(g.name, ''),
	p.builtin, p.is_public, p.public_permission, p.is_listed, p.is_featured, p.display_priority, p.deleted, p.system_prompt,
	p.task_prompt, p.datetime_aware, p.replace_base_system_prompt, p.starter_messages, p.default_model_configuration_id,
	p.icon_name, p.uploaded_image_id, p.search_start_date, p.created_at, p.updated_at`

// personaFrom joins what personaColumns reads.
const personaFrom = ` FROM personas p LEFT JOIN users u ON u.id = p.user_id LEFT JOIN user_groups g ON g.id = p.owner_group_id`

// scanPersona reads a row of personaColumns.
func scanPersona(r interface{ Scan(...any) error }) (*quarry.Persona, error) {
	var (
		p                quarry.Persona
		starters         sql.NullString
		start            sql.NullInt64
		created, updated int64
	)
	if err := r.Scan(&p.ID, &p.Name, &p.Description, &p.OwnerID, &p.OwnerEmail, &p.OwnerGroupID, &p.OwnerGroupName, &p.Builtin,
		&p.IsPublic, &p.PublicPermission, &p.IsListed, &p.IsFeatured, &p.DisplayPriority, &p.Deleted, &p.SystemPrompt, &p.TaskPrompt,
		&p.DatetimeAware, &p.ReplaceBasePrompt, &starters, &p.ModelConfigurationID, &p.IconName, &p.UploadedImageID, &start, &created, &updated); err != nil {
		return nil, err
	}
	if starters.Valid {
		if err := json.Unmarshal([]byte(starters.String), &p.StarterMessages); err != nil {
			return nil, err
		}
	}
	if start.Valid {
		t := quarry.TimeFromMicros(start.Int64)
		p.SearchStartDate = &t
	}
	p.CreatedAt, p.UpdatedAt = quarry.TimeFromMicros(created), quarry.TimeFromMicros(updated)
	p.ToolIDs, p.DocumentSetIDs, p.Labels = []int64{}, []int64{}, []quarry.PersonaLabel{}
	p.UserShares, p.GroupShares = []quarry.PersonaUserShare{}, []quarry.PersonaGroupShare{}
	return &p, nil
}

// personas returns the assistants that cond (a condition on personas p,
// with its arguments; "" for every one) selects, ascending by id, each
// with its tools, sets, labels and shares: five statements, whatever
// their number.
func personas(ctx context.Context, q querier, cond string, args ...any) ([]*quarry.Persona, error) {
	where := ""
	if cond != "" {
		where = " WHERE " + cond
	}
	ps, err := queryAll(ctx, q, scanPersona, `SELECT `+personaColumns+personaFrom+where+` ORDER BY p.id`, args...)
	if err != nil || len(ps) == 0 {
		return ps, mapError(err)
	}
	byID := make(map[int64]*quarry.Persona, len(ps))
	ids := make([]int64, len(ps))
	for i, p := range ps {
		byID[p.ID], ids[i] = p, p.ID
	}
	err = inChunks(ids, "persona_id", func(in string, args []any) error {
		if err := eachInts(ctx, q, `SELECT persona_id, tool_id FROM persona_tools WHERE `+in+` ORDER BY persona_id, tool_id`, args,
			func(p, t int64) { byID[p].ToolIDs = append(byID[p].ToolIDs, t) }); err != nil {
			return err
		}
		if err := eachInts(ctx, q, `SELECT persona_id, document_set_id FROM persona_document_sets WHERE `+in+
			` ORDER BY persona_id, document_set_id`, args, func(p, s int64) { byID[p].DocumentSetIDs = append(byID[p].DocumentSetIDs, s) }); err != nil {
			return err
		}
		if err := eachRow(ctx, q, `SELECT x.persona_id, l.id, l.name FROM persona_label_links x JOIN persona_labels l ON l.id = x.label_id
			WHERE x.`+in+` ORDER BY x.persona_id, l.id`, args, func(row scanner) error {
			var p int64
			var l quarry.PersonaLabel
			if err := row.Scan(&p, &l.ID, &l.Name); err != nil {
				return err
			}
			byID[p].Labels = append(byID[p].Labels, l)
			return nil
		}); err != nil {
			return err
		}
		if err := eachRow(ctx, q, `SELECT x.persona_id, x.user_id, u.email, x.permission FROM persona_users x JOIN users u ON u.id = x.user_id
			WHERE x.`+in+` ORDER BY x.persona_id, x.user_id`, args, func(row scanner) error {
			var p int64
			var s quarry.PersonaUserShare
			if err := row.Scan(&p, &s.UserID, &s.Email, &s.Permission); err != nil {
				return err
			}
			byID[p].UserShares = append(byID[p].UserShares, s)
			return nil
		}); err != nil {
			return err
		}
		return eachRow(ctx, q, `SELECT x.persona_id, x.group_id, g.name, x.permission FROM persona_groups x JOIN user_groups g ON g.id = x.group_id
			WHERE x.`+in+` ORDER BY x.persona_id, x.group_id`, args, func(row scanner) error {
			var p int64
			var s quarry.PersonaGroupShare
			if err := row.Scan(&p, &s.GroupID, &s.Name, &s.Permission); err != nil {
				return err
			}
			byID[p].GroupShares = append(byID[p].GroupShares, s)
			return nil
		})
	})
	return ps, mapError(err)
}

// persona returns assistant id (deleted or not), or nil when there is
// none.
func persona(ctx context.Context, q querier, id int64) (*quarry.Persona, error) {
	ps, err := personas(ctx, q, "p.id = $1", id)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	return ps[0], nil
}

// Personas returns the assistants of listing l of c
// (quarry.PersonaListing.Holds), in Onyx's order (quarry.SortPersonas).
func (db *DB) Personas(ctx context.Context, c *quarry.Caller, l quarry.PersonaListing) ([]*quarry.Persona, error) {
	ps, err := personas(ctx, db.read, "")
	if err != nil {
		return nil, err
	}
	ps = slices.DeleteFunc(ps, func(p *quarry.Persona) bool { return !l.Holds(c, p) })
	quarry.SortPersonas(ps)
	return ps, nil
}

// Persona returns assistant id, if c may read it
// (quarry.Caller.CanReadPersona) and it is not deleted; otherwise
// quarry.ErrPersonaNotFound.
func (db *DB) Persona(ctx context.Context, c *quarry.Caller, id int64) (*quarry.Persona, error) {
	p, err := persona(ctx, db.read, id)
	if err != nil {
		return nil, err
	}
	if p == nil || p.Deleted || !c.CanReadPersona(p) {
		return nil, quarry.ErrPersonaNotFound(id)
	}
	return p, nil
}

// PersonaAvatar returns the file of assistant id's avatar, if c may read
// the assistant (as Persona) and the file is an avatar's upload
// (quarry.CheckAvatar); otherwise quarry.ErrAvatarNotFound, whatever the
// reason. Read its content with OpenFile.
func (db *DB) PersonaAvatar(ctx context.Context, c *quarry.Caller, id int64) (*quarry.File, error) {
	p, err := db.Persona(ctx, c, id)
	if quarry.ErrorCode(err) == quarry.ENOTFOUND {
		return nil, quarry.ErrAvatarNotFound
	}
	if err != nil {
		return nil, err
	}
	if p.UploadedImageID == nil {
		return nil, quarry.ErrAvatarNotFound
	}
	f, err := db.File(ctx, *p.UploadedImageID)
	if quarry.ErrorCode(err) == quarry.ENOTFOUND {
		f, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := quarry.CheckAvatar(p, f); err != nil {
		return nil, err
	}
	return f, nil
}

// CreatePersona makes assistant in for c, owned by c, and returns it. See
// writePersona for the checks, in one transaction.
func (db *DB) CreatePersona(ctx context.Context, c *quarry.Caller, in quarry.PersonaInput) (*quarry.Persona, error) {
	in.ID = 0
	var out *quarry.Persona
	err := db.update(ctx, func(tx *Tx) error {
		var err error
		out, err = tx.writePersona(ctx, c, nil, &in)
		return err
	})
	return out, err
}

// UpdatePersona makes assistant in.ID what in says (a deleted one comes
// back, as Onyx's does): one that does not exist, or that c may not
// change, is refused alike (quarry.ErrPersonaNotEditable, Onyx's 403).
func (db *DB) UpdatePersona(ctx context.Context, c *quarry.Caller, in quarry.PersonaInput) (*quarry.Persona, error) {
	var out *quarry.Persona
	err := db.update(ctx, func(tx *Tx) error {
		old, err := tx.editablePersona(ctx, c, in.ID, true)
		if err != nil {
			return err
		}
		out, err = tx.writePersona(ctx, c, old, &in)
		return err
	})
	return out, err
}

// lockPersona locks assistant id for the rest of tx on PostgreSQL and
// returns it, or nil when there is none.
func (tx *Tx) lockPersona(ctx context.Context, id int64) (*quarry.Persona, error) {
	if tx.db.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT id FROM personas WHERE id = $1 FOR UPDATE`, id); err != nil {
			return nil, err
		}
	}
	return persona(ctx, tx, id)
}

// editablePersona returns assistant id, locked, if it exists (deleted too
// when withDeleted) and c may change it; otherwise
// quarry.ErrPersonaNotEditable.
func (tx *Tx) editablePersona(ctx context.Context, c *quarry.Caller, id int64, withDeleted bool) (*quarry.Persona, error) {
	p, err := tx.lockPersona(ctx, id)
	if err != nil {
		return nil, err
	}
	if p == nil || p.Deleted && !withDeleted {
		return nil, quarry.ErrPersonaNotEditable(id)
	}
	return p, c.CheckEditPersona(p)
}

// writePersona writes assistant in for c: a new one when old is nil, else
// over old. Checks, in order: in's own (quarry.PersonaInput.Check, 400);
// a featured new assistant only by admins and curators; no other live
// assistant of c's (or, for admins, of anyone's) has its name (400, as
// Onyx); its tools exist and may be an assistant's
// (quarry.CheckAssistantTool, 400); its sets exist and c may give them
// (CheckPersonaDocumentSets, 400); its labels, people and groups exist
// (400, 404); its model exists (400). Then the assistant, with the shares
// of its people and groups (each keeping its level), and an audit entry.
func (tx *Tx) writePersona(ctx context.Context, c *quarry.Caller, old *quarry.Persona, in *quarry.PersonaInput) (*quarry.Persona, error) {
	if err := in.Check(); err != nil {
		return nil, err
	}
	if old == nil && in.IsFeatured != nil && *in.IsFeatured && !c.CanSetPersonaFlags() {
		return nil, quarry.ErrFeaturedPersona
	}
	if old == nil {
		cond, args := `name = $1 AND NOT deleted`, []any{in.Name}
		if !c.IsAdmin() {
			cond, args = cond+` AND user_id = $2`, append(args, c.ID)
		}
		var other int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM personas WHERE `+cond, args...).Scan(&other)
		if err == nil {
			return nil, quarry.Errorf(quarry.EINVALID, "Assistant with name '%s' already exists. Please rename your assistant.", in.Name)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
	}
	for _, id := range in.ToolIDs {
		t, err := tx.db.tool(ctx, tx, id)
		if quarry.ErrorCode(err) == quarry.ENOTFOUND {
			t, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
		if err := quarry.CheckAssistantTool(id, t); err != nil {
			return nil, err
		}
	}
	sets := map[int64]*quarry.DocumentSet{}
	err := inChunks(in.DocumentSetIDs, "s.id", func(cond string, args []any) error {
		some, err := documentSets(ctx, tx, cond, args...)
		for _, s := range some {
			sets[s.ID] = s
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := c.CheckPersonaDocumentSets(old, in, sets); err != nil {
		return nil, err
	}
	if in.LabelIDs != nil {
		if err := tx.checkPersonaLabels(ctx, *in.LabelIDs); err != nil {
			return nil, err
		}
	}
	if in.Groups != nil {
		if err := tx.checkGroupsExist(ctx, *in.Groups); err != nil {
			return nil, err
		}
	}
	if in.Users != nil {
		if err := tx.checkUsersExist(ctx, *in.Users); err != nil {
			return nil, err
		}
	}
	if id := in.ModelConfigurationID; id != nil {
		var one int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM llm_models WHERE id = $1`, *id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, quarry.Errorf(quarry.EINVALID, "Model configuration %d does not exist", *id)
		}
		if err != nil {
			return nil, err
		}
	}
	image := in.PersonaImage(old)
	if image != nil {
		f, err := file(ctx, tx, *image)
		if quarry.ErrorCode(err) == quarry.ENOTFOUND {
			f, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
		if err := c.CheckPersonaImage(old, *image, f); err != nil {
			return nil, err
		}
	}
	var starters *string
	if in.StarterMessages != nil {
		b, err := json.Marshal(in.StarterMessages)
		if err != nil {
			return nil, err
		}
		s := string(b)
		starters = &s
	}
	var start *int64
	if in.SearchStartDate != nil {
		us := in.SearchStartDate.Micros()
		start = &us
	}
	now := tx.now.Micros()
	action := "persona.update"
	if old == nil {
		action = "persona.create"
		public := in.IsPublic == nil || *in.IsPublic
		featured := in.IsFeatured != nil && *in.IsFeatured
		if err := tx.QueryRowContext(ctx, `INSERT INTO personas (name, description, user_id, is_public, is_featured, display_priority,
			system_prompt, task_prompt, datetime_aware, replace_base_system_prompt, starter_messages, default_model_configuration_id,
			icon_name, search_start_date, created_at, updated_at, uploaded_image_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15, $16) RETURNING id`,
			in.Name, in.Description, c.ID, public, featured, in.DisplayPriority, in.SystemPrompt, in.TaskPrompt, in.DatetimeAware,
			in.ReplaceBasePrompt, starters, in.ModelConfigurationID, in.IconName, start, now, image).Scan(&in.ID); err != nil {
			return nil, err
		}
		old = &quarry.Persona{ID: in.ID, OwnerID: &c.ID}
	} else {
		public, featured, priority := old.IsPublic, old.IsFeatured, old.DisplayPriority
		if in.IsPublic != nil && *in.IsPublic != public {
			if !c.CanSetPersonaPublic(old) {
				return nil, quarry.ErrPersonaPublic
			}
			public = *in.IsPublic
		}
		if in.IsFeatured != nil && c.CanSetPersonaFlags() {
			featured = *in.IsFeatured
		}
		if priority == nil {
			priority = in.DisplayPriority
		}
		if _, err := tx.ExecContext(ctx, `UPDATE personas SET name = $1, description = $2, is_public = $3, is_featured = $4,
			display_priority = $5, system_prompt = $6, task_prompt = $7, datetime_aware = $8, replace_base_system_prompt = $9,
			starter_messages = $10, default_model_configuration_id = $11, icon_name = $12, search_start_date = $13, deleted = FALSE,
			updated_at = $14, uploaded_image_id = $16 WHERE id = $15`, in.Name, in.Description, public, featured, priority, in.SystemPrompt,
			in.TaskPrompt, in.DatetimeAware, in.ReplaceBasePrompt, starters, in.ModelConfigurationID, in.IconName, start, now, in.ID,
			image); err != nil {
			return nil, err
		}
		for _, table := range []string{"persona_tools", "persona_document_sets"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE persona_id = $1`, in.ID); err != nil {
				return nil, err
			}
		}
	}
	for _, t := range in.ToolIDs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO persona_tools (persona_id, tool_id) VALUES ($1, $2)`, in.ID, t); err != nil {
			return nil, err
		}
	}
	for _, s := range in.DocumentSetIDs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO persona_document_sets (persona_id, document_set_id) VALUES ($1, $2)`, in.ID, s); err != nil {
			return nil, err
		}
	}
	if in.LabelIDs != nil {
		if err := tx.setPersonaLabels(ctx, in.ID, *in.LabelIDs); err != nil {
			return nil, err
		}
	}
	users, groups, _, _ := c.ApplyShares(old, quarry.PersonaShareInput{Users: in.Users, Groups: in.Groups})
	if err := tx.setPersonaShares(ctx, in.ID, users, groups); err != nil {
		return nil, err
	}
	if err := tx.audit(ctx, c, action, "persona", in.ID, nil); err != nil {
		return nil, err
	}
	return persona(ctx, tx, in.ID)
}

// checkPersonaLabels refuses ids of which some names no label (Onyx's
// 400).
func (tx *Tx) checkPersonaLabels(ctx context.Context, ids []int64) error {
	for _, id := range ids {
		var one int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM persona_labels WHERE id = $1`, id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return quarry.Errorf(quarry.EINVALID, "Some label IDs were not found in the database")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// setPersonaLabels makes ids the labels of assistant id.
func (tx *Tx) setPersonaLabels(ctx context.Context, id int64, ids []int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM persona_label_links WHERE persona_id = $1`, id); err != nil {
		return err
	}
	for _, l := range ids {
		if _, err := tx.ExecContext(ctx, `INSERT INTO persona_label_links (persona_id, label_id) VALUES ($1, $2)`, id, l); err != nil {
			return err
		}
	}
	return nil
}

// setPersonaShares makes users and groups the shares of assistant id.
func (tx *Tx) setPersonaShares(ctx context.Context, id int64, users []quarry.PersonaUserShare, groups []quarry.PersonaGroupShare) error {
	for _, table := range []string{"persona_users", "persona_groups"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE persona_id = $1`, id); err != nil {
			return err
		}
	}
	for _, u := range users {
		if _, err := tx.ExecContext(ctx, `INSERT INTO persona_users (persona_id, user_id, permission) VALUES ($1, $2, $3)`,
			id, u.UserID, u.Permission); err != nil {
			return err
		}
	}
	for _, g := range groups {
		if _, err := tx.ExecContext(ctx, `INSERT INTO persona_groups (persona_id, group_id, permission) VALUES ($1, $2, $3)`,
			id, g.GroupID, g.Permission); err != nil {
			return err
		}
	}
	return nil
}

// SharePersona changes whom assistant id is shared with, as in says
// (quarry.Caller.ApplyShares): c must be able to change it (403
// otherwise); its people and groups must exist; its labels too, which it
// replaces when given.
func (db *DB) SharePersona(ctx context.Context, c *quarry.Caller, id int64, in quarry.PersonaShareInput) error {
	return db.update(ctx, func(tx *Tx) error {
		p, err := tx.editablePersona(ctx, c, id, false)
		if err != nil {
			return err
		}
		users, groups, public, level := c.ApplyShares(p, in)
		ids := make([]string, len(users))
		for i, u := range users {
			ids[i] = u.UserID
		}
		if err := tx.checkUsersExist(ctx, ids); err != nil {
			return err
		}
		gids := make([]int64, len(groups))
		for i, g := range groups {
			gids[i] = g.GroupID
		}
		if err := tx.checkGroupsExist(ctx, gids); err != nil {
			return err
		}
		if in.LabelIDs != nil {
			if err := tx.checkPersonaLabels(ctx, *in.LabelIDs); err != nil {
				return err
			}
			if err := tx.setPersonaLabels(ctx, id, dedupe(*in.LabelIDs)); err != nil {
				return err
			}
		}
		if err := tx.setPersonaShares(ctx, id, users, groups); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE personas SET is_public = $1, public_permission = $2, updated_at = $3 WHERE id = $4`,
			public, level, tx.now.Micros(), id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "persona.share", "persona", id, nil)
	})
}

// PersonaFlag is a flag of an assistant that a route of its own sets.
type PersonaFlag string

// The flags: whether it is public (its owners and admins), listed and
// featured (those who may change it).
const (
	PersonaFlagPublic   PersonaFlag = "is_public"
	PersonaFlagListed   PersonaFlag = "is_listed"
	PersonaFlagFeatured PersonaFlag = "is_featured"
)

// SetPersonaFlag sets flag f of assistant id to on: c must be able to
// change it (403 otherwise), and, for is_public, own it
// (quarry.ErrPersonaPublic).
func (db *DB) SetPersonaFlag(ctx context.Context, c *quarry.Caller, id int64, f PersonaFlag, on bool) error {
	return db.update(ctx, func(tx *Tx) error {
		p, err := tx.editablePersona(ctx, c, id, false)
		if err != nil {
			return err
		}
		if f == PersonaFlagPublic && !c.CanSetPersonaPublic(p) {
			return quarry.ErrPersonaPublic
		}
		if _, err := tx.ExecContext(ctx, `UPDATE personas SET `+string(f)+` = $1, updated_at = $2 WHERE id = $3`, on, tx.now.Micros(), id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "persona.update", "persona", id, []string{string(f)})
	})
}

// DeletePersona marks assistant id deleted: one c may not read is not
// found (404), one it may not delete is refused
// (quarry.Caller.CheckDeletePersona).
func (db *DB) DeletePersona(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		p, err := tx.lockPersona(ctx, id)
		if err != nil {
			return err
		}
		if p == nil || p.Deleted || !c.CanReadPersona(p) {
			return quarry.ErrPersonaNotFound(id)
		}
		if err := c.CheckDeletePersona(p); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE personas SET deleted = TRUE, updated_at = $1 WHERE id = $2`, tx.now.Micros(), id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "persona.delete", "persona", id, nil)
	})
}

// UndeletePersona brings back deleted assistant id (admins only, by the
// route): 404 for none, 400 for one that is not deleted (Onyx's
// ValueError).
func (db *DB) UndeletePersona(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		p, err := tx.lockPersona(ctx, id)
		if err != nil {
			return err
		}
		switch {
		case p == nil:
			return quarry.ErrPersonaNotFound(id)
		case !p.Deleted:
			return quarry.Errorf(quarry.EINVALID, "Persona with ID %d is not deleted.", id)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE personas SET deleted = FALSE, updated_at = $1 WHERE id = $2`, tx.now.Micros(), id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "persona.undelete", "persona", id, nil)
	})
}

// SetPersonaPriorities sets the display priority of each assistant of
// priorities (Onyx's update_personas_display_priority): each must be one
// c sees, deleted ones too (403 with Onyx's message otherwise), and none
// is changed unless all may be.
func (db *DB) SetPersonaPriorities(ctx context.Context, c *quarry.Caller, priorities map[int64]int64) error {
	return db.update(ctx, func(tx *Tx) error {
		ids := make([]int64, 0, len(priorities))
		for id := range priorities {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			p, err := persona(ctx, tx, id)
			if err != nil {
				return err
			}
			if p == nil || !(quarry.PersonaListing{IncludeDefault: true, IncludeDeleted: true}).Holds(c, p) {
				return quarry.Errorf(quarry.EFORBIDDEN, "Invalid persona ID provided: Persona with ID %d was not found for this user.", id)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE personas SET display_priority = $1, updated_at = $2 WHERE id = $3`,
				priorities[id], tx.now.Micros(), id); err != nil {
				return err
			}
		}
		return tx.audit(ctx, c, "persona.update", "persona", "display_priorities", []string{"display_priority"})
	})
}

// TransferPersona gives assistant id to person userID or group groupID
// (exactly one; Onyx's _transfer_persona_ownership): c must be allowed to
// (quarry.Caller.CheckTransferPersona); the new owner leaves the shares,
// the old one stays as an EDITOR share.
func (db *DB) TransferPersona(ctx context.Context, c *quarry.Caller, id int64, userID *string, groupID *int64) error {
	if (userID == nil) == (groupID == nil) {
		return quarry.Errorf(quarry.EINVALID, "Exactly one of a user or a group must be the new owner")
	}
	return db.update(ctx, func(tx *Tx) error {
		p, err := tx.lockPersona(ctx, id)
		if err != nil {
			return err
		}
		if p == nil || p.Deleted {
			return quarry.Errorf(quarry.EINVALID, "Agent not found")
		}
		if err := c.CheckTransferPersona(p); err != nil {
			return err
		}
		if userID != nil {
			var (
				active, service bool
				role            quarry.Role
			)
			err := tx.QueryRowContext(ctx, `SELECT is_active, service_account, role FROM users WHERE id = $1`, *userID).Scan(&active, &service, &role)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				return quarry.Errorf(quarry.EINVALID, "New owner not found")
			case err != nil:
				return err
			case !active:
				return quarry.Errorf(quarry.EINVALID, "Ownership can only be transferred to an active user")
			case service:
				return quarry.Errorf(quarry.EINVALID, "Ownership cannot be transferred to bots or service accounts")
			case role == quarry.RoleLimited:
				return quarry.Errorf(quarry.EINVALID, "Ownership cannot be transferred to this account type")
			case p.OwnerID != nil && *p.OwnerID == *userID:
				return quarry.Errorf(quarry.EINVALID, "This user already owns the agent")
			}
		} else {
			var one int64
			err := tx.QueryRowContext(ctx, `SELECT id FROM user_groups WHERE id = $1`, *groupID).Scan(&one)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				return quarry.Errorf(quarry.EINVALID, "New owner group not found")
			case err != nil:
				return err
			case p.OwnerGroupID != nil && *p.OwnerGroupID == *groupID:
				return quarry.Errorf(quarry.EINVALID, "This group already owns the agent")
			}
		}
		users := slices.DeleteFunc(slices.Clone(p.UserShares), func(s quarry.PersonaUserShare) bool { return userID != nil && s.UserID == *userID })
		groups := slices.DeleteFunc(slices.Clone(p.GroupShares), func(s quarry.PersonaGroupShare) bool {
			return groupID != nil && s.GroupID == *groupID
		})
		if p.OwnerID != nil && (userID == nil || *userID != *p.OwnerID) {
			users = append(slices.DeleteFunc(users, func(s quarry.PersonaUserShare) bool { return s.UserID == *p.OwnerID }),
				quarry.PersonaUserShare{UserID: *p.OwnerID, Permission: quarry.PersonaEditor})
		}
		if p.OwnerGroupID != nil && (groupID == nil || *groupID != *p.OwnerGroupID) {
			groups = append(slices.DeleteFunc(groups, func(s quarry.PersonaGroupShare) bool { return s.GroupID == *p.OwnerGroupID }),
				quarry.PersonaGroupShare{GroupID: *p.OwnerGroupID, Permission: quarry.PersonaEditor})
		}
		if err := tx.setPersonaShares(ctx, id, users, groups); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE personas SET user_id = $1, owner_group_id = $2, updated_at = $3 WHERE id = $4`,
			userID, groupID, tx.now.Micros(), id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "persona.transfer", "persona", id, []string{"owner"})
	})
}

// LeavePersona takes c off the shares of assistant id (Onyx's
// remove_user_from_persona_shares): 400 for one that does not exist, its
// owner, and one not shared with c.
func (db *DB) LeavePersona(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		p, err := tx.lockPersona(ctx, id)
		if err != nil {
			return err
		}
		switch {
		case p == nil || p.Deleted:
			return quarry.Errorf(quarry.EINVALID, "Agent not found")
		case p.OwnerID != nil && *p.OwnerID == c.ID:
			return quarry.Errorf(quarry.EINVALID, "The owner cannot remove themselves from their own agent")
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM persona_users WHERE persona_id = $1 AND user_id = $2`, id, c.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				err = quarry.Errorf(quarry.EINVALID, "You are not in this agent's share list")
			}
			return err
		}
		return tx.audit(ctx, c, "persona.leave", "persona", id, nil)
	})
}

// PersonaLabels returns the labels, ascending by id.
func (db *DB) PersonaLabels(ctx context.Context) ([]quarry.PersonaLabel, error) {
	return queryAll(ctx, db.read, func(r interface{ Scan(...any) error }) (quarry.PersonaLabel, error) {
		var l quarry.PersonaLabel
		return l, r.Scan(&l.ID, &l.Name)
	}, `SELECT id, name FROM persona_labels ORDER BY id`)
}

// CreatePersonaLabel makes label name: names are unique
// (quarry.ErrPersonaLabelTaken).
func (db *DB) CreatePersonaLabel(ctx context.Context, c *quarry.Caller, name string) (quarry.PersonaLabel, error) {
	l := quarry.PersonaLabel{Name: name}
	err := db.update(ctx, func(tx *Tx) error {
		if err := tx.checkLabelName(ctx, name, 0); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `INSERT INTO persona_labels (name) VALUES ($1) RETURNING id`, name).Scan(&l.ID); err != nil {
			return err
		}
		return tx.audit(ctx, c, "persona_label.create", "persona_label", l.ID, nil)
	})
	return l, err
}

// checkLabelName refuses name when a label other than self has it.
func (tx *Tx) checkLabelName(ctx context.Context, name string, self int64) error {
	if err := quarry.CheckNoNUL(name); err != nil {
		return err
	}
	var other int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM persona_labels WHERE name = $1 AND id <> $2`, name, self).Scan(&other)
	if err == nil {
		return quarry.ErrPersonaLabelTaken(name)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}

// RenamePersonaLabel names label id name (404 for none).
func (db *DB) RenamePersonaLabel(ctx context.Context, c *quarry.Caller, id int64, name string) error {
	return db.update(ctx, func(tx *Tx) error {
		if err := tx.checkLabelName(ctx, name, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE persona_labels SET name = $1 WHERE id = $2`, name, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				err = quarry.ErrPersonaLabelNotFound(id)
			}
			return err
		}
		return tx.audit(ctx, c, "persona_label.update", "persona_label", id, []string{"name"})
	})
}

// DeletePersonaLabel deletes label id, which leaves the assistants filed
// under it (404 for none).
func (db *DB) DeletePersonaLabel(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM persona_labels WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				err = quarry.ErrPersonaLabelNotFound(id)
			}
			return err
		}
		return tx.audit(ctx, c, "persona_label.delete", "persona_label", id, nil)
	})
}

// DocumentSetsByID returns the sets of ids (those that exist), ascending
// by id, for the snapshots of assistants, which show their sets whoever
// reads them (as Onyx's do).
func (db *DB) DocumentSetsByID(ctx context.Context, ids []int64) ([]*quarry.DocumentSet, error) {
	var out []*quarry.DocumentSet
	err := inChunks(dedupe(ids), "s.id", func(cond string, args []any) error {
		some, err := documentSets(ctx, db.read, cond, args...)
		out = append(out, some...)
		return err
	})
	return out, err
}

// ChatPersona returns the assistant c chats with in session sessionID, or,
// for a new session ("" ), assistant id: c must be able to chat with it
// (quarry.Caller.CheckChatPersona, Onyx's 403), so that one no longer
// shared with c stops answering in its sessions too. A session that is
// not c's gives nil (StartChatTurn refuses it). DB.Assistant reads how
// the assistant answers.
func (db *DB) ChatPersona(ctx context.Context, c *quarry.Caller, sessionID string, id int64) (*quarry.Persona, error) {
	p, mine, err := db.chatPersona(ctx, db.read, c, sessionID, id)
	if err != nil || !mine {
		return nil, err
	}
	return p, c.CheckChatPersona(p)
}

// chatPersona returns the assistant of session sessionID, if the session
// is c's (mine), or else assistant id ("" ), nil when there is none, read
// as far as quarry.Caller.CheckChatPersona needs and in one statement
// (a chat's message asks this): the assistant's row, its share with c
// and its shares with groups. Its tools, sets and labels, and its shares
// with others than c, are not read: the rule reads none of them.
func (db *DB) chatPersona(ctx context.Context, q querier, c *quarry.Caller, sessionID string, id int64) (p *quarry.Persona, mine bool, err error) {
	which, args := `$1`, []any{id, c.ID}
	if sessionID != "" {
		which, args[0] = `(SELECT persona_id FROM chat_sessions WHERE id = $1 AND user_id = $2)`, sessionID
	}
	var share, groups sql.NullString
	p, err = scanPersona(withColumns{q.QueryRowContext(ctx, `SELECT `+personaColumns+`,
		(SELECT permission FROM persona_users WHERE persona_id = p.id AND user_id = $2), `+
		db.textList(`x.group_id || ':' || x.permission`, `persona_groups x WHERE x.persona_id = p.id`, `x.group_id`)+
		personaFrom+` WHERE p.id = `+which, args...), []any{&share, &groups}})
	if errors.Is(err, sql.ErrNoRows) {
		if sessionID == "" {
			return nil, true, nil
		}
		// Not c's session, or one whose assistant is gone: only a
		// refusal reads this.
		err = q.QueryRowContext(ctx, `SELECT persona_id FROM chat_sessions WHERE id = $1 AND user_id = $2`, sessionID, c.ID).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, nil
		}
		return nil, true, mapError(err)
	}
	if err != nil {
		return nil, false, mapError(err)
	}
	if share.Valid {
		p.UserShares = []quarry.PersonaUserShare{{UserID: c.ID, Permission: quarry.PersonaPermission(share.String)}}
	}
	if groups.Valid {
		for s := range strings.SplitSeq(groups.String, ",") {
			gid, level, _ := strings.Cut(s, ":")
			g, err := strconv.ParseInt(gid, 10, 64)
			if err != nil {
				return nil, false, fmt.Errorf("store: persona %d's group shares %q: %w", p.ID, groups.String, err)
			}
			p.GroupShares = append(p.GroupShares, quarry.PersonaGroupShare{GroupID: g, Permission: quarry.PersonaPermission(level)})
		}
	}
	return p, true, nil
}

// withColumns scans a row's first columns as its scanner's caller asks,
// and the rest into more.
type withColumns struct {
	row  interface{ Scan(...any) error }
	more []any
}

// Scan scans the row into dest and then w.more.
func (w withColumns) Scan(dest ...any) error { return w.row.Scan(append(dest, w.more...)...) }

// ActiveAdminCount returns how many active people are admins (Onyx's
// get_active_admin_count, which an assistant's snapshot shows).
func (db *DB) ActiveAdminCount(ctx context.Context) (int64, error) {
	var n int64
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE role = $1 AND is_active AND NOT service_account`, quarry.RoleAdmin).Scan(&n)
	return n, mapError(err)
}
