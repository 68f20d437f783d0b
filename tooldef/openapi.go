package tooldef

import (
	"context"
	"fmt"
	"net/url"

	"github.com/getkin/kin-openapi/openapi3"
)

// checkDocument applies rule 11: doc must be a valid OpenAPI document
// according to kin-openapi.
//
// The loader never reads a file or a URL: the function it would read them
// with refuses to. Examples and default values are not checked against
// their schemas: kin-openapi v0.152.0 takes time exponential in the depth of
// allOf, anyOf and oneOf references to do so, and may recurse without end.
// A document that would make the loader do the same never reaches it
// (checkHollowSchemas). A document that makes kin-openapi panic (it does on
// some null values, such as "prefixItems": [null] in an encoding's header)
// is invalid.
//
// kin-openapi never looks at ctx; checkWork bounds what it may do, and ctx
// is looked at before and after each of its two steps.
func checkDocument(ctx context.Context, doc *value) (err error) {
	if err := checkHollowSchemas(doc); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkWork(ctx, doc); err != nil {
		return err
	}
	defer func() {
		if recover() != nil {
			err = invalid(msgValidatorFailed)
		}
	}()
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IsExternalRefsAllowed = false
	loader.ReadFromURIFunc = refuseURI
	t, err := loader.LoadFromData(doc.raw)
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if err == nil {
		err = t.Validate(ctx, openapi3.DisableExamplesValidation(), openapi3.DisableSchemaDefaultsValidation())
	}
	if err != nil {
		return invalid(fmtInvalidDoc, err)
	}
	return ctx.Err()
}

// refuseURI is an openapi3.ReadFromURIFunc that reads nothing.
func refuseURI(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
	return nil, fmt.Errorf("external reference %q is not allowed", u.Redacted())
}
