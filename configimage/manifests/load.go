package manifests

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/nodezero/nodezero/configimage/report"
	"gopkg.in/yaml.v3"
)

// maxFileSize bounds a manifest file: the largest real ones (extra
// manifests with CRDs) are well under it.
const maxFileSize = 16 << 20

// invalidTitle heads the error Load returns.
const invalidTitle = "invalid manifests"

// walkLimits are report.DefaultLimits with merge keys let through:
// yaml.v3 decodes them, as the installer's YAML reader does.
var walkLimits = report.Limits{MaxNodes: report.DefaultLimits.MaxNodes, MaxDepth: report.DefaultLimits.MaxDepth, MergeKeys: true}

// Load reads a set written by Write: dir/cluster-manifests/*.yaml and
// dir/openshift/*.y*ml.
func Load(dir string) (*Set, error) {
	return LoadFrom(filepath.Join(dir, ClusterManifestsDir), filepath.Join(dir, ExtraManifestsDir))
}

// LoadFrom reads the ZTP manifests in manifestsDir and the extra manifests
// in extraDir (which may be missing). It reports every problem at once, in
// a *report.Invalid (errors.Is report.ErrInvalid) whose entries name the
// file as opened (the directory joined with the name), the line, column
// and field path; unknown fields are warnings (Set.Warnings), not errors. Like the
// installer's loaders it fills defaults: platform names in lower case are
// rewritten (OCPBUGS-7495), userManagedNetworking follows the platform
// when unset, networkType defaults to OVNKubernetes, cpuArchitecture is
// turned into its RPM name and the pull secret JSON is re-indented.
func LoadFrom(manifestsDir, extraDir string) (*Set, error) {
	return loadFS(os.DirFS(manifestsDir), manifestsDir, os.DirFS(extraDir), extraDir)
}

// loadFS reads the manifests from mfs and the extra manifests from xfs;
// mdir and xdir name them in problems.
func loadFS(mfs fs.FS, mdir string, xfs fs.FS, xdir string) (*Set, error) {
	l := &loader{mfs: mfs, mdir: mdir}
	s := &Set{
		ClusterDeployment:   new(ClusterDeployment),
		AgentClusterInstall: new(AgentClusterInstall),
		ClusterImageSet:     new(ClusterImageSet),
		InfraEnv:            new(InfraEnv),
		PullSecret:          new(Secret),
	}
	cd := l.single(ClusterDeploymentFile, s.ClusterDeployment, TypeMeta{HiveAPIVersion, KindClusterDeploy})
	aci := l.single(AgentClusterInstallFile, s.AgentClusterInstall, TypeMeta{HiveExtAPIVersion, KindAgentCluster})
	cis := l.single(ClusterImageSetFile, s.ClusterImageSet, TypeMeta{HiveAPIVersion, KindClusterImageSet})
	ie := l.single(InfraEnvFile, s.InfraEnv, TypeMeta{AgentAPIVersion, KindInfraEnv})
	ps := l.single(PullSecretFile, s.PullSecret, TypeMeta{SecretAPIVersion, KindSecret})
	if cd != nil {
		l.checkClusterDeployment(cd, s.ClusterDeployment)
	}
	if aci != nil {
		l.checkAgentClusterInstall(aci, s.AgentClusterInstall)
	}
	if cis != nil && s.ClusterImageSet.Spec.ReleaseImage == "" {
		cis.fail("spec.releaseImage", "required")
	}
	if ie != nil {
		l.checkInfraEnv(ie, s.InfraEnv)
	}
	if ps != nil {
		l.checkPullSecret(ps, s.PullSecret)
	}
	s.NMStateConfigs = l.nmStateConfigs(NMStateConfigFile)
	s.ExtraManifests = l.extraManifests(xfs, xdir)
	if len(l.errs) > 0 {
		return nil, &report.Invalid{Title: invalidTitle, Entries: l.errs}
	}
	s.Warnings = l.warns
	return s, nil
}

type loader struct {
	mfs         fs.FS  // the manifests directory
	mdir        string // its name, for problems
	errs, warns []report.Entry
}

func (l *loader) fail(file, msg string) {
	l.errs = append(l.errs, report.Entry{File: file, Message: msg})
}

// doc is one decoded document and where its fields are, to place problems.
type doc struct {
	l    *loader
	tree *report.Tree
}

// fail reports a problem with the field at path p, placed where the field
// is written (report.Tree.Field: a collection at its key), or where its
// closest parent is.
func (d *doc) fail(p, msg string) {
	pos := d.tree.Field(p)
	d.l.errs = append(d.l.errs, report.Entry{File: d.tree.File, Line: pos.Line, Column: pos.Column, Path: p, Message: msg})
}

// read returns the bytes of name in fsys, or nil after recording why not
// under file. A missing optional file returns nil silently.
func (l *loader) read(fsys fs.FS, name, file string, optional bool) []byte {
	f, err := fsys.Open(name)
	if err != nil {
		if !(optional && errors.Is(err, fs.ErrNotExist)) {
			msg := err.Error()
			if errors.Is(err, fs.ErrNotExist) {
				msg = "missing: the file is required"
			}
			l.fail(file, msg)
		}
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		l.fail(file, err.Error())
		return nil
	}
	if len(b) > maxFileSize {
		l.fail(file, fmt.Sprintf("larger than %d bytes", maxFileSize))
		return nil
	}
	return b
}

// single decodes a one-document manifest file into out.
func (l *loader) single(name string, out any, want TypeMeta) *doc {
	file := filepath.Join(l.mdir, name)
	data := l.read(l.mfs, name, file, false)
	if data == nil {
		return nil
	}
	docs, ok := l.parse(file, data)
	if !ok {
		return nil
	}
	switch {
	case len(docs) == 0:
		l.fail(file, "empty: want one "+want.Kind)
		return nil
	case len(docs) > 1:
		l.errs = append(l.errs, report.Entry{File: file, Line: docs[1].Line, Message: fmt.Sprintf("%d documents: want one %s", len(docs), want.Kind)})
		return nil
	}
	return l.decode(file, docs[0], out, want)
}

// parse splits data into its non-empty documents' root nodes.
func (l *loader) parse(file string, data []byte) ([]*yaml.Node, bool) {
	docs, err := report.Documents(data)
	if err != nil {
		e := report.SyntaxError(data, err)
		l.errs = append(l.errs, report.Entry{File: file, Line: e.Line, Message: e.Message})
		return nil, false
	}
	var out []*yaml.Node
	for _, n := range docs {
		if !report.IsEmptyDocument(n) {
			out = append(out, n.Content[0])
		}
	}
	return out, true
}

// decode walks root (report.Walk: where each field is, duplicate keys),
// warns about keys out's type has no field for, decodes it and checks
// apiVersion and kind.
func (l *loader) decode(file string, root *yaml.Node, out any, want TypeMeta) *doc {
	if root.Kind != yaml.MappingNode {
		l.errs = append(l.errs, report.Entry{File: file, Line: root.Line, Column: root.Column, Message: "want a mapping with apiVersion, kind, metadata"})
		return nil
	}
	root = withoutStatus(root)
	tree, walked, ok := report.Walk(file, root, walkLimits)
	if l.errs = append(l.errs, walked.Entries...); !ok || walked.HasErrors() {
		return nil
	}
	d := &doc{l: l, tree: tree}
	d.unknownFields("", typeOf(out))
	if err := root.Decode(out); err != nil {
		l.yamlError(file, tree, err)
		return nil
	}
	got := typeMetaOf(out)
	if got.APIVersion != want.APIVersion {
		d.fail("apiVersion", fmt.Sprintf("got %q, want %q", got.APIVersion, want.APIVersion))
	}
	if got.Kind != want.Kind {
		d.fail("kind", fmt.Sprintf("got %q, want %q", got.Kind, want.Kind))
	}
	return d
}

// withoutStatus returns root without its status: status is the cluster's
// output, which the installer writes empty and nobody reads.
func withoutStatus(root *yaml.Node) *yaml.Node {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "status" {
			cp := *root
			cp.Content = append(append([]*yaml.Node(nil), root.Content[:i]...), root.Content[i+2:]...)
			return &cp
		}
	}
	return root
}

// yamlError records a yaml.v3 error: syntax errors and each type error
// with its line, and the field path on that line when known.
func (l *loader) yamlError(file string, tree *report.Tree, err error) {
	for _, e := range report.YAMLErrors(err) {
		l.errs = append(l.errs, report.Entry{File: file, Line: e.Line, Path: tree.PathOn(e.Line), Message: e.Message})
	}
}

// nmStateConfigs reads the optional multi-document nmstateconfig.yaml.
func (l *loader) nmStateConfigs(name string) []*NMStateConfig {
	file := filepath.Join(l.mdir, name)
	data := l.read(l.mfs, name, file, true)
	if data == nil {
		return nil
	}
	docs, ok := l.parse(file, data)
	if !ok {
		return nil
	}
	var out []*NMStateConfig
	for _, root := range docs {
		c := new(NMStateConfig)
		d := l.decode(file, root, c, TypeMeta{AgentAPIVersion, KindNMStateConfig})
		if d == nil {
			continue
		}
		if len(c.Metadata.Labels) == 0 {
			// validateNMStateLabels: the InfraEnv selects these by label.
			d.fail("metadata.labels", fmt.Sprintf("%s does not have any label set", c.Metadata.Name))
		}
		for i, ifc := range c.Spec.Interfaces {
			if ifc.Name == "" || ifc.MACAddress == "" {
				d.fail(fmt.Sprintf("spec.interfaces[%d]", i), "name and macAddress are required")
			}
		}
		out = append(out, c)
	}
	return out
}

// extraManifests reads extraDir/*.y*ml (agent-installer-client's glob),
// sorted by name, checking that each parses as YAML.
func (l *loader) extraManifests(fsys fs.FS, dir string) []ExtraManifest {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.fail(dir, err.Error())
		}
		return nil
	}
	var out []ExtraManifest
	for _, e := range entries {
		if ok, _ := path.Match("*.y*ml", e.Name()); !ok || e.IsDir() {
			continue
		}
		file := filepath.Join(dir, e.Name())
		data := l.read(fsys, e.Name(), file, false)
		if data == nil {
			continue
		}
		if _, ok := l.parse(file, data); !ok {
			continue
		}
		out = append(out, ExtraManifest{Name: e.Name(), Data: data})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Semantic checks: what the installer's loaders and agent-installer-client
// refuse, with their wording where they have one.

func (l *loader) checkClusterDeployment(d *doc, cd *ClusterDeployment) {
	if cd.Spec.ClusterName == "" {
		d.fail("spec.clusterName", "required")
	}
	if cd.Spec.BaseDomain == "" {
		d.fail("spec.baseDomain", "required")
	}
}

func (l *loader) checkAgentClusterInstall(d *doc, aci *AgentClusterInstall) {
	sp := &aci.Spec
	if sp.ProvisionRequirements.ControlPlaneAgents < 1 {
		d.fail("spec.provisionRequirements.controlPlaneAgents", "must be at least 1")
	}
	if sp.PlatformType != "" {
		p, ok := hivePlatform(sp.PlatformType)
		if !ok {
			d.fail("spec.platformType", fmt.Sprintf(`Unsupported value: %q: supported values: "BareMetal", "External", "None", "Nutanix", "VSphere"`, sp.PlatformType))
		}
		sp.PlatformType = p
	}
	if sp.Networking.UserManagedNetworking == nil {
		sp.Networking.UserManagedNetworking = defaultUserManagedNetworking(sp.PlatformType)
	}
	if (sp.PlatformType == PlatformNone || sp.PlatformType == PlatformExternal) && !*sp.Networking.UserManagedNetworking {
		d.fail("spec.networking.userManagedNetworking", fmt.Sprintf("Forbidden: %s platform requires user-managed networking", sp.PlatformType))
	}
	if sp.Networking.NetworkType == "" {
		sp.Networking.NetworkType = "OVNKubernetes"
	}
	if o, ok := aci.Metadata.Annotations[InstallConfigOverridesAnnotation]; ok && !json.Valid([]byte(o)) {
		d.fail("metadata.annotations", InstallConfigOverridesAnnotation+": not valid JSON")
	}
}

func (l *loader) checkInfraEnv(d *doc, ie *InfraEnv) {
	ie.Spec.CPUArchitecture = RPMArch(ie.Spec.CPUArchitecture)
	switch ie.Spec.CPUArchitecture {
	case "", "x86_64", "aarch64", "ppc64le", "s390x":
	default:
		d.fail("spec.cpuArchitecture", fmt.Sprintf("%q is not supported: use x86_64, aarch64, ppc64le or s390x", ie.Spec.CPUArchitecture))
	}
}

func (l *loader) checkPullSecret(d *doc, s *Secret) {
	ps, ok := s.StringData[PullSecretKey]
	switch {
	case len(s.StringData) == 0:
		d.fail("stringData", "the pull secret is empty")
	case !ok:
		d.fail("stringData", "the pull secret key '.dockerconfigjson' is not defined")
	case ps == "":
		d.fail("stringData", "the pull secret does not contain any data")
	default:
		n, err := normalizeDockerConfig(ps)
		if err != nil {
			d.fail("stringData", fmt.Sprintf("the pull secret is not valid JSON: %v", err))
			return
		}
		s.StringData[PullSecretKey] = n
	}
}
