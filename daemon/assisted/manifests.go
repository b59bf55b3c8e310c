package assisted

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// Custom manifests, as assisted-service's manifests API keeps them
// (internal/manifests/manifests.go): files a user adds to what the
// installer's `create manifests` renders, in folder "manifests" or
// "openshift". The model holds which files a cluster has; their content
// lives in the store only, read back for a download. The messages of the
// checks are assisted's, word for word, typos included, so that a client
// matching them (or a person searching for them) finds them.
//
// Where this differs from assisted-service, on purpose:
//   - every rejection of the request is a 400: assisted answers 422 for
//     what go-swagger checks (pattern, enum, required) and for a bad file
//     name, which its swagger does not list;
//   - an unknown cluster is the service's usual 404, naming the cluster
//     (assisted: "Object Not Found");
//   - a change after the installation started is a 409, as the service's
//     other status-bound requests are (assisted: 400), and creating a
//     manifest is refused then too (assisted refuses only update and
//     delete);
//   - an update of a manifest that does not exist is a 404 (assisted
//     creates the target when new content is given, and fails with a 500
//     otherwise), and new content is checked against the new file name
//     (assisted checks it against the old one);
//   - YAML is parsed with yaml.v3 (assisted: yaml.v2), which also refuses
//     a mapping that repeats a key, and its error texts differ.
//
// As assisted-service: creating a manifest that exists replaces its
// content (201; the same content changes nothing), deleting one that does
// not exist succeeds, and no event is emitted.

// maxManifestBytes is assisted's limit on a decoded manifest: a ConfigMap's
// 1 MiB, the smallest object a manifest can become.
const maxManifestBytes = 1 << 20

var manifestFileNameRE = regexp.MustCompile(wire.ManifestFileNamePattern)

// manifestKey names a manifest within its cluster.
type manifestKey struct {
	folder wire.ManifestFolder
	name   string
}

// path is how assisted's messages name a manifest: folder/file.
func (k manifestKey) path() string { return string(k.folder) + "/" + k.name }

// preInstall is assisted's preInstallationStates: while a cluster is in one
// of them, its manifests and install-config overrides may change.
func preInstall(st wire.ClusterStatus) bool {
	switch st {
	case wire.ClusterStatusPendingForInput, wire.ClusterStatusInsufficient, wire.ClusterStatusReady:
		return true
	}
	return false
}

// modifiableCluster returns the cluster if it exists and is still before
// its installation. Callers hold s.mu.
func (s *Service) modifiableCluster(id, what string) (*clusterRec, error) {
	c, err := s.clusterByID(id)
	if err != nil {
		return nil, err
	}
	if !preInstall(c.c.Status) {
		return nil, conflict("cluster %s is not in pre-installation states, can't modify %s after installation has been started", id, what)
	}
	return c, nil
}

// CreateManifest adds a custom manifest, or replaces the content of the one
// with the same folder and name (V2CreateClusterManifest).
func (s *Service) CreateManifest(ctx context.Context, clusterID string, p *wire.CreateManifestParams) (*wire.Manifest, error) {
	if p == nil {
		return nil, badRequest("missing request body")
	}
	key := manifestKey{folder: p.Folder, name: p.FileName}
	if key.folder == "" {
		key.folder = wire.ManifestFolderManifests
	}
	if err := joinProblems(checkFolder("folder in body", key.folder), checkFileNamePattern("file_name in body", p.FileName)); err != nil {
		return nil, err
	}
	// The content is decoded and parsed before the model lock is taken;
	// the cluster is looked at first so that its errors come first, as in
	// assisted, and again under the lock.
	var err error
	s.view(func() { _, err = s.modifiableCluster(clusterID, "manifests") })
	if err != nil {
		return nil, err
	}
	if err := checkManifestNames(clusterID, key.name); err != nil {
		return nil, err
	}
	content, err := manifestContent(clusterID, key.path(), p.Content)
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(t *txn) error {
		c, err := s.modifiableCluster(clusterID, "manifests")
		if err != nil {
			return err
		}
		if err := c.checkDistinct(key); err != nil {
			return err
		}
		c.setManifest(key, wire.ManifestSourceUser)
		t.manifestOp(func(tx *store.Tx) error { return tx.PutManifest(manifestRow(clusterID, key, content)) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &wire.Manifest{Folder: key.folder, FileName: key.name, ManifestSource: wire.ManifestSourceUser}, nil
}

// ListManifests lists a cluster's manifests by folder and name
// (V2ListClusterManifests). Every manifest here is the user's: the service
// generates none, so include_system_generated changes nothing.
func (s *Service) ListManifests(clusterID string) (wire.ListManifests, error) {
	out := wire.ListManifests{}
	var err error
	s.view(func() {
		var c *clusterRec
		if c, err = s.clusterByID(clusterID); err != nil {
			return
		}
		for k, src := range c.manifests {
			out = append(out, &wire.Manifest{Folder: k.folder, FileName: k.name, ManifestSource: src})
		}
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Folder != out[j].Folder {
			return out[i].Folder < out[j].Folder
		}
		return out[i].FileName < out[j].FileName
	})
	return out, nil
}

// UpdateManifest changes a manifest's content, folder or name
// (V2UpdateClusterManifest). A move onto an existing manifest replaces it.
func (s *Service) UpdateManifest(ctx context.Context, clusterID string, p *wire.UpdateManifestParams) (*wire.Manifest, error) {
	if p == nil {
		return nil, badRequest("missing request body")
	}
	src := manifestKey{folder: p.Folder, name: p.FileName}
	dst := src
	var probs [][]string
	if p.Folder == "" {
		probs = append(probs, []string{"folder in body is required"})
	} else {
		probs = append(probs, checkFolder("folder in body", p.Folder))
	}
	probs = append(probs, checkFileNamePattern("file_name in body", p.FileName))
	if p.UpdatedFolder != nil {
		dst.folder = *p.UpdatedFolder
		probs = append(probs, checkFolder("updated_folder in body", dst.folder))
	}
	if p.UpdatedFileName != nil {
		dst.name = *p.UpdatedFileName
		probs = append(probs, checkFileNamePattern("updated_file_name in body", dst.name))
	}
	if err := joinProblems(probs...); err != nil {
		return nil, err
	}
	// Everything that does not need the lock is checked before it is
	// taken, in assisted's order; what the model says is checked again
	// under the lock.
	check := func(c *clusterRec) error {
		if src.name != dst.name {
			if err := c.checkDistinct(dst); err != nil {
				return err
			}
		}
		if _, ok := c.manifests[src]; !ok {
			return notFound("Cluster manifest %s doesn't exist in cluster %s", src.path(), clusterID)
		}
		return nil
	}
	var err error
	s.view(func() {
		var c *clusterRec
		if c, err = s.modifiableCluster(clusterID, "manifests"); err != nil {
			return
		}
		if err = checkManifestNames(clusterID, src.name, dst.name); err != nil {
			return
		}
		err = check(c)
	})
	if err != nil {
		return nil, err
	}
	var content []byte
	newContent := p.UpdatedContent != nil
	if newContent {
		if content, err = manifestContent(clusterID, dst.path(), *p.UpdatedContent); err != nil {
			return nil, err
		}
	}
	err = s.update(ctx, func(t *txn) error {
		c, err := s.modifiableCluster(clusterID, "manifests")
		if err != nil {
			return err
		}
		if err := check(c); err != nil {
			return err
		}
		if dst == src && !newContent {
			return nil // nothing to change
		}
		delete(c.manifests, src)
		c.setManifest(dst, wire.ManifestSourceUser)
		switch {
		case newContent:
			t.manifestOp(func(tx *store.Tx) error { return tx.PutManifest(manifestRow(clusterID, dst, content)) })
			if dst != src {
				t.manifestOp(func(tx *store.Tx) error { return tx.DeleteManifest(clusterID, string(src.folder), src.name) })
			}
		default:
			t.manifestOp(func(tx *store.Tx) error {
				return tx.MoveManifest(clusterID, string(src.folder), src.name, string(dst.folder), dst.name)
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &wire.Manifest{Folder: dst.folder, FileName: dst.name, ManifestSource: wire.ManifestSourceUser}, nil
}

// DeleteManifest deletes a manifest (V2DeleteClusterManifest); folder ""
// is "manifests". Deleting a manifest the cluster does not have succeeds,
// as in assisted.
func (s *Service) DeleteManifest(ctx context.Context, clusterID string, folder wire.ManifestFolder, fileName string) error {
	key, err := queryManifestKey(folder, fileName)
	if err != nil {
		return err
	}
	return s.update(ctx, func(t *txn) error {
		c, err := s.modifiableCluster(clusterID, "manifests")
		if err != nil {
			return err
		}
		if err := checkManifestNames(clusterID, key.name); err != nil {
			return err
		}
		if _, ok := c.manifests[key]; !ok {
			return nil
		}
		delete(c.manifests, key)
		t.manifestOp(func(tx *store.Tx) error { return tx.DeleteManifest(clusterID, string(key.folder), key.name) })
		return nil
	})
}

// ManifestFile returns a manifest's file as stored
// (v2DownloadClusterManifest); folder "" is "manifests".
func (s *Service) ManifestFile(ctx context.Context, clusterID string, folder wire.ManifestFolder, fileName string) ([]byte, error) {
	key, err := queryManifestKey(folder, fileName)
	if err != nil {
		return nil, err
	}
	missing := notFound("Cluster manifest %s doesn't exist in cluster %s", key.path(), clusterID)
	s.view(func() {
		var c *clusterRec
		if c, err = s.clusterByID(clusterID); err != nil {
			return
		}
		if err = checkManifestNames(clusterID, key.name); err != nil {
			return
		}
		if _, ok := c.manifests[key]; !ok {
			err = missing
		}
	})
	if err != nil {
		return nil, err
	}
	var m store.Manifest
	err = s.store.View(ctx, func(tx *store.Tx) error {
		m, err = tx.Manifest(clusterID, string(key.folder), key.name)
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, missing // deleted, or not yet written, by a request running alongside
	case err != nil:
		return nil, internal(err, "read manifest %s", key.path())
	}
	return m.Content, nil
}

// setManifest records that c has the manifest k.
func (c *clusterRec) setManifest(k manifestKey, src wire.ManifestSource) {
	if c.manifests == nil {
		c.manifests = map[manifestKey]wire.ManifestSource{}
	}
	c.manifests[k] = src
}

// checkDistinct is assisted's validateFileDistinct: a file name may be in
// one of the two folders only.
func (c *clusterRec) checkDistinct(k manifestKey) error {
	other := wire.ManifestFolderOpenshift
	if k.folder == wire.ManifestFolderOpenshift {
		other = wire.ManifestFolderManifests
	}
	if _, ok := c.manifests[manifestKey{folder: other, name: k.name}]; ok {
		return badRequest("manifest file %s for cluster ID %s in folder %s cannot be uploaded as it is not distinct between {manifest, openshift} folders",
			k.name, c.c.ID, k.folder)
	}
	return nil
}

func manifestRow(clusterID string, k manifestKey, content []byte) store.Manifest {
	return store.Manifest{
		ManifestInfo: store.ManifestInfo{ClusterID: clusterID, Folder: string(k.folder), FileName: k.name, Source: string(wire.ManifestSourceUser)},
		Content:      content,
	}
}

// queryManifestKey checks the folder and file_name query parameters of
// delete and download.
func queryManifestKey(folder wire.ManifestFolder, fileName string) (manifestKey, error) {
	k := manifestKey{folder: folder, name: fileName}
	if k.folder == "" {
		k.folder = wire.ManifestFolderManifests
	}
	var req []string
	if fileName == "" {
		req = []string{"file_name in query is required"}
	}
	return k, joinProblems(checkFolder("folder in query", k.folder), req)
}

// The checks go-swagger makes from the swagger, in go-openapi's words.

func checkFolder(field string, f wire.ManifestFolder) []string {
	if f != wire.ManifestFolderManifests && f != wire.ManifestFolderOpenshift {
		return []string{fmt.Sprintf("%s should be one of [manifests openshift]", field)}
	}
	return nil
}

func checkFileNamePattern(field, name string) []string {
	if name == "" {
		return []string{field + " is required"}
	}
	if !manifestFileNameRE.MatchString(name) {
		return []string{fmt.Sprintf("%s should match '%s'", field, wire.ManifestFileNamePattern)}
	}
	return nil
}

func joinProblems(lists ...[]string) error {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return nil
	}
	return badRequest("%s", strings.Join(all, "; "))
}

// checkManifestNames is assisted's validateManifestFileNames.
func checkManifestNames(clusterID string, names ...string) error {
	for _, name := range names {
		base := strings.TrimSuffix(name, path.Ext(name))
		switch {
		case name == "" || name[0] == '.' || strings.TrimSpace(base) == "":
			return badRequest("Cluster manifest %s for cluster %s has an invalid filename.", name, clusterID)
		case strings.Contains(name, " "):
			return badRequest("Cluster manifest %s for cluster %s should not include a space in its name.", name, clusterID)
		case strings.Contains(name, "/"):
			return badRequest("Cluster manifest %s for cluster %s should not include a directory in it's name.", name, clusterID)
		}
	}
	return nil
}

// manifestContent decodes a manifest's base64 content and checks it as
// assisted's decodeUserSuppliedManifest and validateUserSuppliedManifest
// do: not empty, at most 1 MiB, and parsing as its extension says.
func manifestContent(clusterID, file, b64 string) ([]byte, error) {
	if strings.Trim(b64, " ") == "" {
		return nil, badRequest("Manifest content of file %s for cluster ID %s is empty", file, clusterID)
	}
	content, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, badRequest("failed to base64-decode cluster manifest content for cluster %s", clusterID)
	}
	if len(content) > maxManifestBytes {
		return nil, badRequest("Manifest content of file %s for cluster ID %s exceeds the maximum file size of 1MiB", file, clusterID)
	}
	switch ext := path.Ext(file); {
	case ext == ".yaml" || ext == ".yml":
		if err := checkYAMLDocuments(content); err != nil {
			return nil, badRequest("Manifest content of file %s for cluster ID %s has an invalid YAML format: %s", file, clusterID, err)
		}
	case ext == ".json":
		if !json.Valid(content) {
			return nil, badRequest("Manifest content of file %s for cluster ID %s has an illegal JSON format", file, clusterID)
		}
	case strings.HasPrefix(ext, ".patch"):
		if err := checkYAMLPatch(content); err != nil {
			return nil, badRequest("Patch content of file %s for cluster ID %s is invalid: %s", file, clusterID, err)
		}
	default:
		return nil, badRequest("Manifest filename of file %s for cluster ID %s is invalid. Only json, yaml and yml or patch extensions are supported", file, clusterID)
	}
	return content, nil
}

// checkYAMLDocuments parses every document of a (multi-document) YAML file.
func checkYAMLDocuments(b []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// patchOperation is one operation of a YAML patch (RFC 6902 in YAML, as
// github.com/krishicks/yaml-patch reads it for assisted).
type patchOperation struct {
	Op    string `yaml:"op"`
	Path  string `yaml:"path"`
	From  string `yaml:"from"`
	Value any    `yaml:"value"`
}

// checkYAMLPatch wants what yamlpatch.DecodePatch accepts: a YAML list of
// operations.
func checkYAMLPatch(b []byte) error {
	var ops []patchOperation
	return yaml.Unmarshal(b, &ops)
}

// manifestOp queues a write of a manifest row, made after the rows of
// clusters, infra-envs and hosts in the same commit.
func (t *txn) manifestOp(op func(*store.Tx) error) { t.manifests = append(t.manifests, op) }
