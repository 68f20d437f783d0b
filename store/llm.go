package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/quarryhq/quarry"
)

// Model providers (quarry.LLMProvider): their rows in llm_providers, their
// models in llm_models, the groups they are shared with in
// llm_provider_groups, the assistants they are restricted to in
// llm_provider_personas (migration 00026), the default model in
// llm_default_model. Keys are
// sealed (purposeLLMKey) and come back in clear: never answer them.

// llmProviderColumns are the columns scanLLMProvider reads, from
// llm_providers p.
const llmProviderColumns = `p.id, p.name, p.provider, p.api_key, p.api_base, p.api_version, p.deployment_name, p.is_public,
	p.created_at, p.updated_at`

// scanLLMProvider reads a row of llmProviderColumns, its key in clear.
func (db *DB) scanLLMProvider(s interface{ Scan(...any) error }) (*quarry.LLMProvider, error) {
	var (
		p                quarry.LLMProvider
		key              []byte
		created, updated int64
	)
	if err := s.Scan(&p.ID, &p.Name, &p.Provider, &key, &p.APIBase, &p.APIVersion, &p.DeploymentName, &p.IsPublic,
		&created, &updated); err != nil {
		return nil, err
	}
	if key != nil {
		pt, err := db.keys.open(purposeLLMKey, key)
		if err != nil {
			return nil, err
		}
		p.APIKey = string(pt)
	}
	p.CreatedAt, p.UpdatedAt = quarry.TimeFromMicros(created), quarry.TimeFromMicros(updated)
	p.Groups, p.Personas, p.Models = []int64{}, []int64{}, []quarry.ModelConfiguration{}
	return &p, nil
}

// llmProviders returns the providers, or the one with id when id is not
// 0, ascending by id, with their groups, assistants and models (ascending
// by id), in four statements whatever their number.
func (db *DB) llmProviders(ctx context.Context, q querier, id int64) ([]*quarry.LLMProvider, error) {
	ps, err := queryAll(ctx, q, db.scanLLMProvider, `SELECT `+llmProviderColumns+` FROM llm_providers p
		WHERE $1 = 0 OR p.id = $1 ORDER BY p.id`, id)
	if err != nil || len(ps) == 0 {
		return ps, err
	}
	byID := make(map[int64]*quarry.LLMProvider, len(ps))
	for _, p := range ps {
		byID[p.ID] = p
	}
	err = eachInts(ctx, q, `SELECT llm_provider_id, group_id FROM llm_provider_groups
		WHERE $1 = 0 OR llm_provider_id = $1 ORDER BY llm_provider_id, group_id`, []any{id}, func(p, g int64) {
		if pr := byID[p]; pr != nil {
			pr.Groups = append(pr.Groups, g)
		}
	})
	if err != nil {
		return nil, err
	}
	err = eachInts(ctx, q, `SELECT llm_provider_id, persona_id FROM llm_provider_personas
		WHERE $1 = 0 OR llm_provider_id = $1 ORDER BY llm_provider_id, persona_id`, []any{id}, func(p, a int64) {
		if pr := byID[p]; pr != nil {
			pr.Personas = append(pr.Personas, a)
		}
	})
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT id, llm_provider_id, name, is_visible, max_input_tokens, supports_image_input,
			supports_reasoning, display_name, custom_display_name
		FROM llm_models WHERE $1 = 0 OR llm_provider_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var (
			m        quarry.ModelConfiguration
			provider int64
		)
		if err := rows.Scan(&m.ID, &provider, &m.Name, &m.IsVisible, &m.MaxInputTokens, &m.SupportsImageInput,
			&m.SupportsReasoning, &m.DisplayName, &m.CustomDisplayName); err != nil {
			rows.Close()
			return nil, err
		}
		if p := byID[provider]; p != nil {
			p.Models = append(p.Models, m)
		}
	}
	return ps, closeRows(rows)
}

// llmProvider returns provider id, or nil when there is none.
func (db *DB) llmProvider(ctx context.Context, q querier, id int64) (*quarry.LLMProvider, error) {
	if id == 0 {
		return nil, nil
	}
	ps, err := db.llmProviders(ctx, q, id)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	return ps[0], nil
}

// defaultModel returns the default model, or nil.
func defaultModel(ctx context.Context, q querier) (*quarry.DefaultModel, error) {
	var d quarry.DefaultModel
	err := q.QueryRowContext(ctx, `SELECT m.llm_provider_id, m.name FROM llm_default_model d JOIN llm_models m ON m.id = d.model_id`).
		Scan(&d.ProviderID, &d.ModelName)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// LLMProviders returns every model provider, ascending by id, with its
// groups and models, and the default model (nil if none), kept between
// requests while they hold (see readCache). Their keys are in clear:
// never answer them.
func (db *DB) LLMProviders(ctx context.Context) ([]*quarry.LLMProvider, *quarry.DefaultModel, error) {
	p, err := cached(ctx, db, (*readCache).getProviders, func(q querier) (*providersCopy, error) {
		p := &providersCopy{}
		var err error
		if p.ps, err = db.llmProviders(ctx, q, 0); err != nil {
			return nil, err
		}
		p.def, err = defaultModel(ctx, q)
		return p, err
	}, (*readCache).putProviders)
	if err != nil {
		return nil, nil, mapError(err)
	}
	return p.ps, p.def, nil
}

// LLMProvider returns model provider id, its key in clear (never to be
// answered), or quarry.ErrLLMProviderNotFound.
func (db *DB) LLMProvider(ctx context.Context, id int64) (*quarry.LLMProvider, error) {
	p, err := db.llmProvider(ctx, db.read, id)
	if err != nil {
		return nil, mapError(err)
	}
	if p == nil {
		return nil, quarry.ErrLLMProviderNotFound
	}
	return p, nil
}

// UpsertLLMProvider creates or changes a model provider as u says, for c
// (an admin), and returns it, its key in clear. In one transaction: Onyx's
// rules of is_creation (quarry.LLMProviderUpsert.CheckExists), the rules
// of u's fields (Check), the provider as it would be (Apply: the stored
// key kept, and kept to its api_base), its groups (each must exist and not
// be a default group), and the default model, which a change may neither
// remove nor hide. The audit entry names the fields that changed.
func (db *DB) UpsertLLMProvider(ctx context.Context, c *quarry.Caller, u quarry.LLMProviderUpsert) (*quarry.LLMProvider, error) {
	var out *quarry.LLMProvider
	err := db.update(ctx, func(tx *Tx) error {
		old, err := db.llmProvider(ctx, tx, u.ChangesID())
		if err != nil {
			return err
		}
		if err := u.CheckExists(old != nil); err != nil {
			return err
		}
		if err := tx.checkLLMProviderPersonas(ctx, &u); err != nil {
			return err
		}
		if err := u.Check(); err != nil {
			return err
		}
		next, err := u.Apply(old)
		if err != nil {
			return err
		}
		if err := tx.checkGroupsExist(ctx, next.Groups); err != nil {
			return err
		}
		if old != nil {
			def, err := defaultModel(ctx, tx)
			if err != nil {
				return err
			}
			if def != nil && def.ProviderID == old.ID {
				if err := next.CheckKeepsDefault(def.ModelName); err != nil {
					return err
				}
			}
		}
		var key []byte
		if next.APIKey != "" {
			key = db.keys.seal(purposeLLMKey, []byte(next.APIKey))
		}
		action := "llm_provider.update"
		if old == nil {
			action = "llm_provider.create"
			err = tx.QueryRowContext(ctx, `INSERT INTO llm_providers (name, provider, api_key, api_base, api_version, deployment_name,
					is_public, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id`,
				next.Name, next.Provider, key, next.APIBase, next.APIVersion, next.DeploymentName, next.IsPublic, tx.now.Micros()).Scan(&next.ID)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE llm_providers SET name = $1, provider = $2, api_key = $3, api_base = $4, api_version = $5,
					deployment_name = $6, is_public = $7, updated_at = $8 WHERE id = $9`,
				next.Name, next.Provider, key, next.APIBase, next.APIVersion, next.DeploymentName, next.IsPublic,
				later(tx.now, old.UpdatedAt).Micros(), old.ID)
		}
		if err != nil {
			return err
		}
		if err := tx.writeLLMModels(ctx, old, &next); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM llm_provider_groups WHERE llm_provider_id = $1`, next.ID); err != nil {
			return err
		}
		for _, g := range next.Groups {
			if _, err := tx.ExecContext(ctx, `INSERT INTO llm_provider_groups (llm_provider_id, group_id) VALUES ($1, $2)`, next.ID, g); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM llm_provider_personas WHERE llm_provider_id = $1`, next.ID); err != nil {
			return err
		}
		for _, a := range next.Personas {
			if _, err := tx.ExecContext(ctx, `INSERT INTO llm_provider_personas (llm_provider_id, persona_id) VALUES ($1, $2)`, next.ID, a); err != nil {
				return err
			}
		}
		if err := tx.audit(ctx, c, action, "llm_provider", next.ID, quarry.LLMProviderChangedFields(old, &next)); err != nil {
			return err
		}
		out, err = db.llmProvider(ctx, tx, next.ID)
		return err
	})
	return out, err
}

// checkLLMProviderPersonas applies u.CheckPersonas with the assistants
// that exist, read in one statement.
func (tx *Tx) checkLLMProviderPersonas(ctx context.Context, u *quarry.LLMProviderUpsert) error {
	if len(u.Personas) == 0 {
		return nil
	}
	var args []any
	ids, err := queryInts(ctx, tx, `SELECT id FROM personas WHERE `+sqlIn("id", anys(u.Personas), &args), args...)
	if err != nil {
		return err
	}
	return u.CheckPersonas(func(id int64) bool { return slices.Contains(ids, id) })
}

// writeLLMModels makes next's models those of its provider: the models of
// old that next does not name are deleted, those it names again are
// changed in place (keeping their ids), and the others are added.
func (tx *Tx) writeLLMModels(ctx context.Context, old, next *quarry.LLMProvider) error {
	if old != nil {
		for _, m := range old.Models {
			if next.Model(m.Name) == nil {
				if _, err := tx.ExecContext(ctx, `DELETE FROM llm_models WHERE id = $1`, m.ID); err != nil {
					return err
				}
			}
		}
	}
	for _, m := range next.Models {
		var err error
		if m.ID != 0 {
			_, err = tx.ExecContext(ctx, `UPDATE llm_models SET is_visible = $1, max_input_tokens = $2, supports_image_input = $3,
					supports_reasoning = $4, display_name = $5, custom_display_name = $6 WHERE id = $7`,
				m.IsVisible, m.MaxInputTokens, m.SupportsImageInput, m.SupportsReasoning, m.DisplayName, m.CustomDisplayName, m.ID)
		} else {
			_, err = tx.ExecContext(ctx, `INSERT INTO llm_models (llm_provider_id, name, is_visible, max_input_tokens,
					supports_image_input, supports_reasoning, display_name, custom_display_name)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
				next.ID, m.Name, m.IsVisible, m.MaxInputTokens, m.SupportsImageInput, m.SupportsReasoning, m.DisplayName, m.CustomDisplayName)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// DeleteLLMProvider deletes model provider id for c (an admin), with its
// models; the provider of the default model only with force, which leaves
// no default (quarry.CheckDeleteLLMProvider).
func (db *DB) DeleteLLMProvider(ctx context.Context, c *quarry.Caller, id int64, force bool) error {
	return db.update(ctx, func(tx *Tx) error {
		p, err := db.llmProvider(ctx, tx, id)
		if err != nil {
			return err
		}
		if p == nil {
			return quarry.ErrLLMProviderNotFound
		}
		def, err := defaultModel(ctx, tx)
		if err != nil {
			return err
		}
		var defProvider int64
		if def != nil {
			defProvider = def.ProviderID
		}
		if err := quarry.CheckDeleteLLMProvider(id, defProvider, force); err != nil {
			return err
		}
		// Assistants that answered with one of its models answer with the
		// default one (Onyx's delete_llm_provider).
		if _, err := tx.ExecContext(ctx, `UPDATE personas SET default_model_configuration_id = NULL
			WHERE default_model_configuration_id IN (SELECT id FROM llm_models WHERE llm_provider_id = $1)`, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM llm_providers WHERE id = $1`, id); err != nil {
			return err
		}
		fields := []string{}
		if def != nil && defProvider == id {
			fields = append(fields, "default_text")
		}
		return tx.audit(ctx, c, "llm_provider.delete", "llm_provider", id, fields)
	})
}

// SetDefaultModel makes d the default model for c (an admin): a model
// that d's provider configures (quarry.ErrNotAModel otherwise), made
// visible if it was not, as Onyx does.
func (db *DB) SetDefaultModel(ctx context.Context, c *quarry.Caller, d quarry.DefaultModel) error {
	return db.update(ctx, func(tx *Tx) error {
		var (
			modelID int64
			visible bool
		)
		err := tx.QueryRowContext(ctx, `SELECT id, is_visible FROM llm_models WHERE llm_provider_id = $1 AND name = $2`,
			d.ProviderID, d.ModelName).Scan(&modelID, &visible)
		if errors.Is(err, sql.ErrNoRows) {
			return quarry.ErrNotAModel(d.ModelName, d.ProviderID)
		}
		if err != nil {
			return err
		}
		fields := []string{"default_text"}
		if !visible {
			if _, err := tx.ExecContext(ctx, `UPDATE llm_models SET is_visible = $1 WHERE id = $2`, true, modelID); err != nil {
				return err
			}
			fields = append(fields, "model_configurations")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM llm_default_model`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO llm_default_model (id, model_id) VALUES (1, $1)`, modelID); err != nil {
			return err
		}
		return tx.audit(ctx, c, "llm_provider.set_default", "llm_provider", d.ProviderID, fields)
	})
}

// ChatModel returns the model an answer of c goes to under choice
// (quarry.ChooseChatModel: the model c chose if it exists and c may use
// its provider, else the default model), with its provider's key in clear
// (never to be answered or logged), or quarry.ErrNoDefaultModel.
func (db *DB) ChatModel(ctx context.Context, c *quarry.Caller, choice quarry.ModelChoice) (*quarry.ChatModel, error) {
	ps, def, err := db.LLMProviders(ctx)
	if err != nil {
		return nil, err
	}
	return quarry.ChooseChatModel(c, ps, def, choice)
}

// ModelPersona returns assistant id, whose models c lists
// (quarry.Caller.CheckPersonaModels).
func (db *DB) ModelPersona(ctx context.Context, c *quarry.Caller, id int64) (*quarry.Persona, error) {
	p, err := persona(ctx, db.read, id)
	if err != nil {
		return nil, err
	}
	if err := c.CheckPersonaModels(p); err != nil {
		return nil, err
	}
	return p, nil
}

// DefaultModel returns the default model (POST /admin/llm/default) with
// its provider's key in clear (never to be answered or logged), its
// api_base (quarry.LLMProvider.BaseURL) and context window, or
// quarry.ErrNoDefaultModel: ChatModel with no choice.
func (db *DB) DefaultModel(ctx context.Context) (*quarry.ChatModel, error) {
	return db.ChatModel(ctx, nil, quarry.ModelChoice{})
}
