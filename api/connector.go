package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// connectorInput converts the request model to the domain's input. The
// config is kept compact, as every response shows it.
func (b *connectorInput) input() quarry.ConnectorInput {
	var config bytes.Buffer
	if err := json.Compact(&config, b.ConnectorSpecificConfig); err != nil {
		config.Write(b.ConnectorSpecificConfig) // decode checked it: cannot happen
	}
	in := quarry.ConnectorInput{
		Name:        b.Name,
		Source:      b.Source,
		InputType:   b.InputType,
		Config:      config.Bytes(),
		RefreshFreq: value(b.RefreshFreq),
		PruneFreq:   value(b.PruneFreq),
	}
	if b.Groups.Set() {
		in.Groups = &b.Groups.Value
	}
	if b.IndexingStart.Set() {
		t := quarry.Time{Time: b.IndexingStart.Value.UTC()}
		in.IndexingStart = &t
	}
	if b.AccessType.Set() {
		in.AccessType = b.AccessType.Value
	}
	return in
}

// connectorView is a connector as the connector routes answer it: Onyx's
// ConnectorSnapshot, and how the connector is shared, so that a client
// that sends back what it read keeps the sharing. The status listing and
// the snapshots inside other objects stay Onyx's.
type connectorView struct {
	*quarry.Connector
	AccessType quarry.AccessType `json:"access_type"`
	Groups     []int64           `json:"groups"`
}

func viewConnector(c *quarry.Connector) connectorView {
	return connectorView{c, c.AccessType, c.Groups}
}

// handleCreateConnector serves POST /manage/admin/connector.
func (s *Server) handleCreateConnector(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createConnectorRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	id, err := s.db.CreateConnector(r.Context(), c, in.Body.input())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, struct {
		ID         int64 `json:"id"`
		Credential any   `json:"credential"`
	}{ID: id})
}

// handleListConnectors serves GET /manage/connector and Onyx's GET
// /manage/admin/connector, whose credential query keeps the connectors
// the caller sees paired with that credential.
func (s *Server) handleListConnectors(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in connectorsQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	cs, err := s.db.Connectors(r.Context(), c)
	if err != nil {
		return err
	}
	out := make([]connectorView, 0, len(cs))
	for _, conn := range cs {
		if in.Credential.Set() && !slices.Contains(conn.CredentialIDs, in.Credential.Value) {
			continue
		}
		out = append(out, viewConnector(conn))
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleGetConnector serves GET /manage/connector/{connector_id}.
func (s *Server) handleGetConnector(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in getConnectorRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	conn, err := s.db.Connector(r.Context(), c, in.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, viewConnector(conn))
}

// handleUpdateConnector serves PATCH /manage/admin/connector/{connector_id}.
func (s *Server) handleUpdateConnector(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in updateConnectorRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	conn, err := s.db.UpdateConnector(r.Context(), c, in.ID, in.Body.input())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, viewConnector(conn))
}

// handleDeleteConnector serves DELETE /manage/admin/connector/{connector_id}.
func (s *Server) handleDeleteConnector(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in deleteConnectorRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteConnector(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, statusResponse{true, "Connector deleted successfully", in.ID})
}

// ccPairPath holds the path parameters of the cc-pair routes.
type ccPairPath struct {
	ConnectorID  int64 `path:"connector_id"`
	CredentialID int64 `path:"credential_id"`
}

// handleCreateCCPair serves
// PUT /manage/connector/{connector_id}/credential/{credential_id}.
func (s *Server) handleCreateCCPair(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createCCPairRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	id, err := s.db.CreateCCPair(r.Context(), c, in.ConnectorID, in.CredentialID, quarry.CCPairInput{
		Name:       in.Body.Name,
		AccessType: in.Body.AccessType,
		Groups:     in.Body.Groups,
	})
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("Creating new association between Connector %d and Credential %d", in.ConnectorID, in.CredentialID)
	return writeJSON(w, http.StatusOK, statusResponse{true, msg, id})
}

// handleDeleteCCPair serves
// DELETE /manage/connector/{connector_id}/credential/{credential_id}.
func (s *Server) handleDeleteCCPair(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in ccPairPath
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteCCPair(r.Context(), c, in.ConnectorID, in.CredentialID); err != nil {
		return err
	}
	msg := fmt.Sprintf("Credential %d removed from Connector", in.CredentialID)
	return writeJSON(w, http.StatusOK, statusResponse{true, msg, in.ConnectorID})
}

// connectorSourcesResponse is the answer to GET /manage/connector-sources.
type connectorSourcesResponse struct {
	Sources []quarry.DocumentSource `json:"sources"`
}

// handleConnectorSources serves GET /manage/connector-sources: the sources
// Quarry has a connector for (outbound/connector's registry), whose pairs
// its workers index; the console marks them in its source picker.
func (s *Server) handleConnectorSources(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	return writeJSON(w, http.StatusOK, connectorSourcesResponse{Sources: s.indexes})
}
