package quarry

// CCPair pairs a connector with one of its credentials and shares the result
// with user groups. A connector may be paired with several credentials, but
// with each at most once.
type CCPair struct {
	ID           int64      `json:"id"`
	Name         string     `json:"name"`
	ConnectorID  int64      `json:"connector_id"`
	CredentialID int64      `json:"credential_id"`
	AccessType   AccessType `json:"access_type"`
	Groups       []int64    `json:"groups"`
	CreatorID    *string    `json:"creator_id"`
	CreatedAt    Time       `json:"time_created"`
}

// CCPairInput holds the fields of a cc-pair to create.
type CCPairInput struct {
	Name       string
	AccessType AccessType
	Groups     []int64
}

// StatusFilter narrows the connector status listing. Empty slices do not
// filter.
type StatusFilter struct {
	Sources     []DocumentSource
	AccessTypes []AccessType
}

// ConnectorStatus is one entry of the connector status listing: a cc-pair
// with its connector and its credential.
type ConnectorStatus struct {
	CCPairID   int64       `json:"cc_pair_id"`
	Name       string      `json:"name"`
	Connector  *Connector  `json:"connector"`
	Credential *Credential `json:"credential"`
	AccessType AccessType  `json:"access_type"`
	Groups     []int64     `json:"groups"`
}
