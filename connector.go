package quarry

import "encoding/json"

// Connector is an external content system Quarry indexes, such as a
// Confluence space or a Google Drive. Its credentials are attached through
// cc-pairs. Its fields are in the order of Onyx's ConnectorSnapshot, the
// wire shape.
type Connector struct {
	Name          string          `json:"name"`
	Source        DocumentSource  `json:"source"`
	InputType     InputType       `json:"input_type"`
	Config        json.RawMessage `json:"connector_specific_config"` // A JSON object.
	RefreshFreq   *int64          `json:"refresh_freq"`
	PruneFreq     *int64          `json:"prune_freq"`
	IndexingStart *Time           `json:"indexing_start"`
	ID            int64           `json:"id"`
	CredentialIDs []int64         `json:"credential_ids"` // Of its cc-pairs the caller can see, ascending.
	CreatedAt     Time            `json:"time_created"`
	UpdatedAt     Time            `json:"time_updated"`
}

// ConnectorInput holds the fields of a connector to create, or to replace on
// update. AccessType and Groups only feed the sharing check (contract
// section 6); they are not stored on the connector.
type ConnectorInput struct {
	Name          string
	Source        DocumentSource
	InputType     InputType
	Config        json.RawMessage
	RefreshFreq   *int64
	PruneFreq     *int64
	IndexingStart *Time
	AccessType    AccessType
	Groups        []int64
}
