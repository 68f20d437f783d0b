package api

import (
	"strconv"

	"github.com/quarryhq/quarry"
)

// The listing of connector statuses is long, so its entries are encoded by
// hand rather than by reflection. jsonappend_test.go checks that every
// appender writes what encoding/json would.

// appendNullableString appends s, or null if s is nil.
func appendNullableString(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return quarry.AppendJSONString(dst, *s)
}

// appendInts appends ids as a JSON array.
func appendInts(dst []byte, ids []int64) []byte {
	dst = append(dst, '[')
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, id, 10)
	}
	return append(dst, ']')
}

// appendConnector appends the ConnectorSnapshot of c, in the key order of
// quarry.Connector's JSON encoding. Its config is JSON text the store
// checked on the way in.
func appendConnector(dst []byte, c *quarry.Connector) []byte {
	dst = appendConnectorHead(dst, c)
	dst = appendInts(dst, c.CredentialIDs)
	return appendConnectorTail(dst, c)
}

// appendConnectorHead appends the ConnectorSnapshot of c up to the value of
// its credential_ids, which differs from caller to caller in the status
// listing.
func appendConnectorHead(dst []byte, c *quarry.Connector) []byte {
	dst = append(dst, `{"name":`...)
	dst = quarry.AppendJSONString(dst, c.Name)
	dst = append(dst, `,"source":`...)
	dst = quarry.AppendJSONString(dst, string(c.Source))
	dst = append(dst, `,"input_type":`...)
	dst = quarry.AppendJSONString(dst, string(c.InputType))
	dst = append(dst, `,"connector_specific_config":`...)
	dst = append(dst, c.Config...)
	dst = append(dst, `,"refresh_freq":`...)
	dst = appendNullableInt(dst, c.RefreshFreq)
	dst = append(dst, `,"prune_freq":`...)
	dst = appendNullableInt(dst, c.PruneFreq)
	dst = append(dst, `,"indexing_start":`...)
	if c.IndexingStart == nil {
		dst = append(dst, "null"...)
	} else {
		dst = c.IndexingStart.AppendJSON(dst)
	}
	dst = append(dst, `,"id":`...)
	dst = strconv.AppendInt(dst, c.ID, 10)
	return append(dst, `,"credential_ids":`...)
}

// appendConnectorTail appends the ConnectorSnapshot of c after the value
// of its credential_ids.
func appendConnectorTail(dst []byte, c *quarry.Connector) []byte {
	dst = append(dst, `,"time_created":`...)
	dst = c.CreatedAt.AppendJSON(dst)
	dst = append(dst, `,"time_updated":`...)
	dst = c.UpdatedAt.AppendJSON(dst)
	return append(dst, '}')
}

// appendNullableInt appends n, or null if n is nil.
func appendNullableInt(dst []byte, n *int64) []byte {
	if n == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, *n, 10)
}

// appendCredential appends the CredentialSnapshot of k with credJSON (the
// masked or clear JSON text of its credential_json) in place of
// k.CredentialJSON, in the key order of quarry.Credential's JSON encoding.
func appendCredential(dst []byte, k *quarry.Credential, credJSON []byte) []byte {
	dst = append(dst, `{"credential_json":`...)
	dst = append(dst, credJSON...)
	dst = append(dst, `,"admin_public":`...)
	dst = strconv.AppendBool(dst, k.AdminPublic)
	dst = append(dst, `,"source":`...)
	dst = quarry.AppendJSONString(dst, string(k.Source))
	dst = append(dst, `,"name":`...)
	dst = appendNullableString(dst, k.Name)
	dst = append(dst, `,"curator_public":`...)
	dst = strconv.AppendBool(dst, k.CuratorPublic)
	dst = append(dst, `,"groups":`...)
	dst = appendInts(dst, k.Groups)
	dst = append(dst, `,"id":`...)
	dst = strconv.AppendInt(dst, k.ID, 10)
	dst = append(dst, `,"user_id":`...)
	dst = appendNullableString(dst, k.UserID)
	dst = append(dst, `,"user_email":`...)
	dst = appendNullableString(dst, k.UserEmail)
	dst = append(dst, `,"time_created":`...)
	dst = k.CreatedAt.AppendJSON(dst)
	dst = append(dst, `,"time_updated":`...)
	dst = k.UpdatedAt.AppendJSON(dst)
	return append(dst, '}')
}
