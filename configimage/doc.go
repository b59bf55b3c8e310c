// Package configimage reads and writes the agent config image (ISO 9660 with a
// gzip'd newc cpio), the install-config/agent-config inputs and their
// validation reports, the ZTP manifests and the nmstate subset. It imports no
// other package of this module. (Built in issues #3 and #4.)
package configimage
