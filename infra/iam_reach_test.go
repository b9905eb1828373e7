package main

import (
	"go/constant"
	"go/types"
	"sort"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/callgraph/rta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"

	"github.com/gifq/webhooks/shared/schema"
)

// The static side of least privilege: what each function's code can ask of
// AWS, read from the code itself. From a function's main and the handler it
// gives the runtime, the code reachable (rapid type analysis) gives the
// store and queue methods it calls; each such method's own closure inside
// its package gives the DynamoDB and SQS calls it makes, which item writes
// its transactions hold (a transaction needs the item action of each of its
// parts: there is no TransactWriteItems action), which indexes it names and
// whether it seals or opens secrets (KMS, through the store's Sealer).
// Calls to AWS from other packages (ratelimit, redrive) count as
// they are. The result is what the role must allow; tableGrants and
// signingKeyGrants say what it does allow, and the template must say the
// same (TestIAMLeastPrivilege).

const modulePath = "github.com/gifq/webhooks"

// usage is what one function's code may call.
type usage struct {
	Table   map[string]bool // dynamodb:<Action> on the table
	Indexes map[string]bool // index names it queries
	SQS     map[string]bool // sqs:<Action> (any queue)
	KMS     map[string]bool // kms:<Action>
}

var (
	usageOnce sync.Once
	usageByFn map[string]usage
	usageErr  error
)

// codeUsage analyses ./functions/... once per test binary.
func codeUsage(t *testing.T) map[string]usage {
	t.Helper()
	usageOnce.Do(func() { usageByFn, usageErr = analyseFunctions() })
	if usageErr != nil {
		t.Fatal(usageErr)
	}
	return usageByFn
}

// transactParts are the transaction parts and the item action each needs.
var transactParts = map[string]string{
	"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem",
}

// components are the packages whose methods are reached only through the
// calls into them: their own code is taken from those entry points (a
// closure of static calls inside the package), not from the coarse
// reachability of the whole program, which would count every method.
var components = map[string]string{"/shared/store": "Store", "/shared/queue": "Queue"}

// sealerKMS: the KMS actions behind the store's Sealer (envelope.Keyring):
// Seal may create the envelope's data key, Open only decrypts it.
var sealerKMS = map[string][]string{"Seal": {"Decrypt", "GenerateDataKey"}, "Open": {"Decrypt"}}

func analyseFunctions() (map[string]usage, error) {
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Dir: ".."}
	pkgs, err := packages.Load(cfg, "./functions/...")
	if err != nil {
		return nil, err
	}
	if packages.PrintErrors(pkgs) > 0 {
		return nil, errString("packages did not load")
	}
	prog, mains := ssautil.AllPackages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	type component struct {
		ptr     types.Type
		methods *types.MethodSet
	}
	comps := map[string]component{}
	for _, p := range prog.AllPackages() {
		for suffix, name := range components {
			if p.Pkg.Path() == modulePath+suffix {
				ptr := types.NewPointer(p.Pkg.Scope().Lookup(name).Type())
				comps[suffix] = component{ptr, prog.MethodSets.MethodSet(ptr)}
			}
		}
	}
	if len(comps) != len(components) {
		return nil, errString("a component package was not found")
	}
	indexNames := map[string]bool{}
	for _, ix := range schema.Table.Indexes {
		indexNames[ix.Name] = true
	}
	componentOf := func(f *ssa.Function) string {
		for suffix := range components {
			if inPkg(f, suffix) {
				return suffix
			}
		}
		return ""
	}
	// closure: the component's functions reachable from f by static calls
	// and closures, without leaving its package.
	closure := func(f *ssa.Function, into map[*ssa.Function]bool) {
		suffix := componentOf(f)
		stack := []*ssa.Function{f}
		for len(stack) > 0 {
			g := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if g == nil || into[g] || !inPkg(g, suffix) {
				continue
			}
			into[g] = true
			stack = append(stack, g.AnonFuncs...)
			for _, b := range g.Blocks {
				for _, ins := range b.Instrs {
					if c, ok := ins.(ssa.CallInstruction); ok {
						if callee := c.Common().StaticCallee(); callee != nil {
							stack = append(stack, callee)
						}
					}
				}
			}
		}
	}
	// entries follows the calls of f into the components.
	entries := func(f *ssa.Function, into map[*ssa.Function]bool) {
		for _, b := range f.Blocks {
			for _, ins := range b.Instrs {
				c, ok := ins.(ssa.CallInstruction)
				if !ok {
					continue
				}
				com := c.Common()
				if callee := com.StaticCallee(); callee != nil && componentOf(callee) != "" && componentOf(callee) != componentOf(f) {
					closure(callee, into)
				}
				if !com.IsInvoke() {
					continue
				}
				// A call through an interface a component implements
				// (delivery's, httpapi's, envelope's views of the store).
				iface := com.Value.Type().Underlying().(*types.Interface)
				for _, c := range comps {
					if types.Implements(c.ptr, iface) {
						if sel := c.methods.Lookup(com.Method.Pkg(), com.Method.Name()); sel != nil {
							closure(prog.MethodValue(sel), into)
						}
					}
				}
			}
		}
	}
	out := map[string]usage{}
	for _, m := range mains {
		fn := m.Pkg.Path()[strings.LastIndex(m.Pkg.Path(), "/")+1:]
		u := usage{Table: map[string]bool{}, Indexes: map[string]bool{}, SQS: map[string]bool{}, KMS: map[string]bool{}}
		res := rta.Analyze(roots(m), false)
		inComp := map[*ssa.Function]bool{}
		var outside []*ssa.Function // reachable code outside the components whose AWS calls count
		for f := range res.Reachable {
			// shared/destination/awsdest's SQS, SNS and EventBridge calls run as the
			// customer's role, assumed (its credentials, not this role's).
			if f.Pkg == nil || !strings.HasPrefix(f.Pkg.Pkg.Path(), modulePath) || componentOf(f) != "" || inPkg(f, "/shared/envelope") || inPkg(f, "/shared/destination/awsdest") {
				continue
			}
			outside = append(outside, f)
			entries(f, inComp)
		}
		// A component calling another (the store never calls the queue
		// today, but may): follow until nothing new.
		for n := -1; n != len(inComp); {
			n = len(inComp)
			for f := range inComp {
				entries(f, inComp)
			}
		}
		for f := range inComp {
			outside = append(outside, f)
		}
		for _, f := range outside {
			for _, b := range f.Blocks {
				for _, ins := range b.Instrs {
					collect(ins, inPkg(f, "/shared/store"), indexNames, u)
				}
			}
		}
		out[fn] = u
	}
	return out, nil
}

// roots are a function's main and the handler it gives the Lambda runtime:
// lambda.Start calls the handler by reflection, which no call graph sees, so
// every function value made in the main package (a.API().Handle) is a root.
func roots(m *ssa.Package) []*ssa.Function {
	main := m.Func("main")
	out := []*ssa.Function{main}
	for _, f := range append([]*ssa.Function{main}, main.AnonFuncs...) {
		for _, b := range f.Blocks {
			for _, ins := range b.Instrs {
				if mc, ok := ins.(*ssa.MakeClosure); ok {
					h := mc.Fn.(*ssa.Function)
					// The handler's package init (and its imports'): the
					// package variables it sets (httpapi's route table of
					// method values) hold what the handler calls. Not main's
					// init, which would make every package's tables roots.
					out = append(out, h)
					if len(mc.Bindings) == 1 {
						if n, ok := deref(mc.Bindings[0].Type()).(*types.Named); ok {
							out = append(out, m.Prog.Package(n.Obj().Pkg()).Func("init"))
						}
					}
				}
			}
		}
	}
	return out
}

// collect records what one instruction asks of AWS.
func collect(ins ssa.Instruction, storeCode bool, indexNames map[string]bool, u usage) {
	for _, op := range ins.Operands(nil) {
		if c, ok := (*op).(*ssa.Const); ok && storeCode && c.Value != nil && c.Value.Kind() == constant.String {
			if s := strings.Trim(c.Value.ExactString(), `"`); indexNames[s] {
				u.Indexes[s] = true
			}
		}
	}
	if a, ok := ins.(*ssa.Alloc); ok {
		if n, ok := deref(a.Type()).(*types.Named); ok && n.Obj().Pkg() != nil &&
			n.Obj().Pkg().Path() == "github.com/aws/aws-sdk-go-v2/service/dynamodb/types" {
			if action, ok := transactParts[n.Obj().Name()]; ok {
				u.Table[action] = true
			}
		}
	}
	c, ok := ins.(ssa.CallInstruction)
	if !ok {
		return
	}
	if com := c.Common(); storeCode && com.IsInvoke() {
		if n, ok := com.Value.Type().(*types.Named); ok && n.Obj().Name() == "Sealer" {
			for _, a := range sealerKMS[com.Method.Name()] {
				u.KMS[a] = true
			}
		}
	}
	sig := c.Common().Signature()
	if sig.Params().Len() < 2 {
		return
	}
	n, ok := deref(sig.Params().At(1).Type()).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || !strings.HasSuffix(n.Obj().Name(), "Input") {
		return
	}
	action := strings.TrimSuffix(n.Obj().Name(), "Input")
	switch n.Obj().Pkg().Path() {
	case "github.com/aws/aws-sdk-go-v2/service/dynamodb":
		if action != "TransactWriteItems" { // its parts count instead
			u.Table[action] = true
		}
	case "github.com/aws/aws-sdk-go-v2/service/sqs":
		u.SQS[action] = true
	case "github.com/aws/aws-sdk-go-v2/service/kms":
		u.KMS[action] = true
	}
}

func deref(t types.Type) types.Type {
	if p, ok := t.(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

func inPkg(f *ssa.Function, suffix string) bool {
	if f.Pkg == nil && f.Parent() != nil {
		f = f.Parent()
	}
	return f.Pkg != nil && f.Pkg.Pkg.Path() == modulePath+suffix
}

type errString string

func (e errString) Error() string { return string(e) }

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sqsIAM is the IAM action behind an SQS call: a batch call needs its
// single-message action.
func sqsIAM(call string) string {
	switch call {
	case "SendMessageBatch":
		return "sqs:SendMessage"
	case "DeleteMessageBatch":
		return "sqs:DeleteMessage"
	case "ChangeMessageVisibilityBatch":
		return "sqs:ChangeMessageVisibility"
	}
	return "sqs:" + call
}

// TestIAMFollowsCode: each function's role allows exactly the DynamoDB
// actions and indexes its code uses (tableGrants), the KMS actions behind the
// store's sealing (signingKeyGrants), and every SQS call it makes. A new
// store call in a function's path that its role does not allow fails here,
// before AWS would answer AccessDenied in production; a grant the code no
// longer needs fails too.
func TestIAMFollowsCode(t *testing.T) {
	code := codeUsage(t)
	s := synth(t, "dev")
	for _, fn := range Functions {
		u, ok := code[fn]
		if !ok {
			t.Errorf("%s: no functions/%s/main.go analysed", fn, fn)
			continue
		}
		g := tableGrants[fn]
		if got, want := keys(u.Table), sorted(g.Actions); !equal(got, want) {
			t.Errorf("%s: the code calls DynamoDB %v; tableGrants allow %v", fn, got, want)
		}
		if got, want := keys(u.Indexes), sorted(g.Indexes); !equal(got, want) {
			t.Errorf("%s: the code queries the indexes %v; tableGrants allow %v", fn, got, want)
		}
		var kms []string
		for _, a := range signingKeyGrants[fn] {
			kms = append(kms, strings.TrimPrefix(a, "kms:"))
		}
		if got, want := keys(u.KMS), sorted(kms); !equal(got, want) {
			t.Errorf("%s: the code needs KMS %v; signingKeyGrants allow %v", fn, got, want)
		}
		_, f := s.functionByName(t, fn)
		role := strings.TrimSuffix(strings.Trim(render(props(f)["Role"]), "${}"), ".Arn")
		allowed := map[string]bool{}
		for _, st := range s.statements() {
			if st.Effect == "Allow" && contains(st.Roles, role) {
				for _, a := range st.Actions {
					allowed[a] = true
				}
			}
		}
		for call := range u.SQS {
			if !allowed[sqsIAM(call)] {
				t.Errorf("%s: the code calls SQS %s; its role lacks %s", fn, call, sqsIAM(call))
			}
		}
	}
}

// TestCodeUsageSeesCalls proves the analysis is not vacuous: it finds the
// calls everyone knows are there.
func TestCodeUsageSeesCalls(t *testing.T) {
	code := codeUsage(t)
	for fn, want := range map[string][]string{
		FnAPI: {"PutItem", "Query"}, FnDeliver: {"UpdateItem"}, FnSweeper: {"Query"}, FnRedrive: {"UpdateItem"},
	} {
		for _, a := range want {
			if !code[fn].Table[a] {
				t.Errorf("%s: analysis missed DynamoDB %s", fn, a)
			}
		}
	}
	if !code[FnRedrive].SQS["ReceiveMessage"] || !code[FnSweeper].Indexes["sweep"] || !code[FnDeliver].KMS["Decrypt"] {
		t.Errorf("analysis missed a known call: %+v", code)
	}
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
