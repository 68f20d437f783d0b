package connector

import (
	"fmt"
	"io"
	"strings"

	"github.com/xuri/excelize/v2"
)

// Limits of the spreadsheet reader.
const (
	// maxXLSXUnzipped bounds the parts of an .xlsx file once inflated.
	maxXLSXUnzipped = 256 << 20
	// maxXLSXPart bounds one part (a sheet's XML) that excelize reads
	// in memory; a larger sheet is read from a temporary file.
	maxXLSXPart = 16 << 20
)

// xlsxText writes the text of an Excel .xlsx workbook, read by excelize:
// each sheet in order, its name on a line, then a line per row of its
// cells' formatted values joined by ", " (as a CSV file is read); a row
// with no value is left out.
func xlsxText(out *textBuffer, r io.Reader) error {
	tmp, _, err := spool(r)
	if err != nil {
		return err
	}
	defer tmp.Close()
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	f, err := excelize.OpenReader(tmp, excelize.Options{UnzipSizeLimit: maxXLSXUnzipped, UnzipXMLSizeLimit: maxXLSXPart})
	if err != nil {
		return fmt.Errorf("it is not an xlsx file that can be read (%s)", err)
	}
	defer f.Close()
	for i, sheet := range f.GetSheetList() {
		rows, err := f.Rows(sheet)
		if err != nil {
			return fmt.Errorf("its sheet %q cannot be read (%s)", sheet, err)
		}
		head := sheet + "\n"
		if i > 0 {
			head = "\n" + head
		}
		if err := out.WriteString(head); err != nil {
			rows.Close()
			return err
		}
		for rows.Next() {
			cols, err := rows.Columns()
			if err != nil {
				rows.Close()
				return fmt.Errorf("its sheet %q cannot be read (%s)", sheet, err)
			}
			line := strings.Join(cols, ", ")
			if strings.Trim(line, ", ") == "" {
				continue
			}
			if err := out.WriteString(line + "\n"); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
	}
	return nil
}
