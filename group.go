package quarry

// UserGroup is a named set of users that cc-pairs and credentials are shared
// with. A member may curate the group (see Caller.Curates).
type UserGroup struct {
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	Users      []User   `json:"users"`       // Members, ascending by email.
	CuratorIDs []string `json:"curator_ids"` // Members whose membership has is_curator.
	CCPairIDs  []int64  `json:"cc_pair_ids"` // Attached cc-pairs, ascending.
	// CCPairs are the attached cc-pairs, ascending by id, with their
	// credentials in clear: responses show them masked.
	CCPairs []*CCPairInfo `json:"-"`
	// SCIMSynced says whether the company's directory manages the group,
	// and SCIMMemberIDs are its members whom the directory manages (see
	// DirectoryGroup), ascending.
	SCIMSynced    bool     `json:"-"`
	SCIMMemberIDs []string `json:"-"`
	CreatedAt     Time     `json:"time_created"`
	UpdatedAt     Time     `json:"time_updated"`
}

// Membership is a user's membership of a group.
type Membership struct {
	GroupID   int64
	IsCurator bool
}

// UserGroupInput holds the fields of a group to create or change. A nil
// field is left unchanged on update.
type UserGroupInput struct {
	Name      *string
	UserIDs   []string // nil: unchanged
	CCPairIDs []int64  // nil: unchanged
}

// CheckNew reports why in cannot make a new group: it needs a name.
func (in *UserGroupInput) CheckNew() error {
	if in.Name == nil {
		return Errorf(EINVALID, "A user group needs a name")
	}
	return nil
}
