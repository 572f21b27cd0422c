// Command funclen lists the functions of a Go module that are longer than
// a limit, for make lint. Test files are skipped, and so are data tables:
// functions whose body is a single return of a composite literal (or of its
// address). It exits 1 when it lists any.
//
//	go run ./internal/tools/funclen [-max 80] [dir]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	max := flag.Int("max", 80, "longest function allowed, in lines")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	long, err := scan(root, *max)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	for _, l := range long {
		fmt.Println(l)
	}
	if len(long) > 0 {
		fmt.Fprintf(os.Stderr, "funclen: %d functions over %d lines; split them into named steps\n", len(long), *max)
		os.Exit(1)
	}
}

// scan returns "file:line: func name is N lines" for every function over
// max lines under root.
func scan(root string, max int) ([]string, error) {
	fset := token.NewFileSet()
	var long []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil || isTable(fd.Body) {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			if n := end.Line - start.Line + 1; n > max {
				long = append(long, fmt.Sprintf("%s:%d: func %s is %d lines", p, start.Line, fd.Name.Name, n))
			}
		}
		return nil
	})
	return long, err
}

// isTable reports whether body is `return T{...}` or `return &T{...}`.
func isTable(body *ast.BlockStmt) bool {
	if len(body.List) != 1 {
		return false
	}
	ret, ok := body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false
	}
	e := ret.Results[0]
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	_, ok = e.(*ast.CompositeLit)
	return ok
}
