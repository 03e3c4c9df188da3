package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// embedderPackages are the packages a host application uses to embed payd:
// the front door, the stores, the test harness and fakes, the Go client and
// the metrics adapter. Their godoc is their manual.
var embedderPackages = []string{".", "storage/sqlite", "storage/postgres", "paydtest", "paydmock", "transport/client", "metrics"}

// TestEmbedderGodoc: every exported name of the packages an embedder uses
// (function, type, method, constant, variable, struct field, interface
// method) has a comment that says what it is for, and each package a
// package comment.
func TestEmbedderGodoc(t *testing.T) {
	for _, dir := range embedderPackages {
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		var parsed []*ast.File
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			parsed = append(parsed, f)
		}
		if len(parsed) == 0 {
			t.Fatalf("no Go files in %s: the check reads nothing", dir)
		}
		pkgs := []struct {
			Name  string
			Files []*ast.File
		}{{Name: dir, Files: parsed}}
		for _, pkg := range pkgs {
			missing := func(pos token.Pos, what string) {
				p := fset.Position(pos)
				rel, _ := filepath.Rel(root, p.Filename)
				t.Errorf("%s:%d: %s has no comment saying what it is for", filepath.ToSlash(rel), p.Line, what)
			}
			hasPkgDoc := false
			for _, f := range pkg.Files {
				hasPkgDoc = hasPkgDoc || f.Doc != nil
				for _, decl := range f.Decls {
					switch d := decl.(type) {
					case *ast.FuncDecl:
						if !d.Name.IsExported() || d.Doc != nil || (d.Recv != nil && !exportedRecv(d.Recv)) {
							continue
						}
						missing(d.Pos(), "func "+d.Name.Name)
					case *ast.GenDecl:
						for _, spec := range d.Specs {
							switch s := spec.(type) {
							case *ast.TypeSpec:
								if !s.Name.IsExported() {
									continue
								}
								if s.Doc == nil && d.Doc == nil {
									missing(s.Pos(), "type "+s.Name.Name)
								}
								fieldsDocumented(s, missing)
							case *ast.ValueSpec:
								for _, n := range s.Names {
									if n.IsExported() && s.Doc == nil && s.Comment == nil && d.Doc == nil {
										missing(n.Pos(), n.Name)
									}
								}
							}
						}
					}
				}
			}
			if !hasPkgDoc {
				t.Errorf("package %s (%s) has no package comment", pkg.Name, dir)
			}
		}
	}
}

func exportedRecv(recv *ast.FieldList) bool {
	typ := recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}

// fieldsDocumented reports the exported fields of a struct type and the
// methods of an interface type that have no comment of their own (an
// interface of one method is its type's comment).
func fieldsDocumented(s *ast.TypeSpec, missing func(token.Pos, string)) {
	var list *ast.FieldList
	switch x := s.Type.(type) {
	case *ast.StructType:
		list = x.Fields
	case *ast.InterfaceType:
		if len(x.Methods.List) == 1 {
			return // the type's comment is its one method's
		}
		list = x.Methods
	default:
		return
	}
	for _, f := range list.List {
		if f.Doc != nil || f.Comment != nil {
			continue
		}
		for _, n := range f.Names {
			if n.IsExported() {
				missing(n.Pos(), s.Name.Name+"."+n.Name)
			}
		}
	}
}
