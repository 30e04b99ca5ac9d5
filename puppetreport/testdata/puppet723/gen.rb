#!/usr/bin/env ruby
# Regenerates the reports in this directory with Puppet's own report class
# (Puppet 7.23, Debian's puppet-agent package): each input report JSON is
# loaded with Puppet::Transaction::Report.from_data_hash, as a Puppet 7
# server loads an agent's report, and written back as
#
#   <name>.json.gz  to_data_hash as JSON (what the server's processors and
#                   the terminus work from)
#   <name>.yaml.gz  to_yaml (what the `http` report processor POSTs and
#                   `store` writes)
#
# The inputs are the shared corpus (report format 10: the smallest report of
# each shape, a shape being the key sets and value types it uses) and a
# fleet from bench/fleet.py --format puppet (formats 10, 11 and 12 of agents
# 5.5 to 8: the smallest report of each format, agent version and status).
# A format 10 report comes back with server_used in place of master_used,
# keeping its report_format: Puppet 7 reads either and writes server_used.
#
# Usage: ruby puppetreport/testdata/puppet723/gen.rb [SHARED_DIR]
# (SHARED_DIR: the team's shared directory, default ../shared beside the
# repository, or $REPORTDB_SHARED). Needs Ruby, Puppet 7 and python3.
require 'json'
require 'set'
require 'tmpdir'
require 'zlib'
require 'puppet'

dir = File.expand_path(__dir__)
repo = File.expand_path('../../..', dir)
shared = ARGV[0] || ENV['REPORTDB_SHARED'] || File.expand_path('../shared', repo)
Dir.mktmpdir do |tmp|
  Puppet.initialize_settings(['--confdir', tmp, '--vardir', tmp, '--codedir', tmp,
                              '--logdir', tmp, '--rundir', tmp])
end

def gzip_write(path, text)
  File.open(path, 'wb') do |f|
    gz = Zlib::GzipWriter.new(f, Zlib::BEST_COMPRESSION)
    gz.mtime = 1 # reproducible output (0 would mean now)
    gz.write(text)
    gz.close
  end
end

def read_json(path)
  text = path.end_with?('.gz') ? Zlib::GzipReader.open(path, &:read) : File.read(path)
  JSON.parse(text)
end

# shape: the report's keys and the types of its values, the keys used by
# its logs, statuses and events, and its metric categories
def shape(r)
  sig = Set.new
  r.each { |k, v| sig << "report.#{k}:#{v.class}" }
  (r['logs'] || []).each { |l| l.each_key { |k| sig << "log.#{k}" } }
  (r['metrics'] || {}).each_key { |c| sig << "metric.#{c}" }
  (r['resource_statuses'] || {}).each_value do |s|
    s.each_key { |k| sig << "status.#{k}" }
    (s['events'] || []).each { |e| e.each_key { |k| sig << "event.#{k}" } }
  end
  sig.to_a.sort
end

inputs = {} # output name => parsed report
corpus = Dir[File.join(shared, 'corpus', 'format10', '*.json.gz')].sort
raise "no corpus in #{shared}/corpus/format10" if corpus.empty?
corpus.map { |p| [p, read_json(p)] }.group_by { |_, r| shape(r) }.each_value do |group|
  path, r = group.min_by { |p, _| [File.size(p), p] }
  inputs["corpus-#{File.basename(path, '.json.gz')}"] = r
end

Dir.mktmpdir do |tmp|
  system('python3', File.join(shared, 'bench', 'fleet.py'), '--nodes', '40', '--runs', '1', '--format', 'puppet',
         '--out', "#{tmp}/fleet/", '--quiet', exception: true)
  fleet = Dir["#{tmp}/fleet/reports/*.json"].sort.map { |p| [p, read_json(p)] }
  fleet.group_by { |_, r| [r['report_format'], r['puppet_version'], r['status']] }.sort_by { |k, _| k.map(&:to_s) }.each do |key, group|
    path, r = group.min_by { |p, _| [File.size(p), p] }
    inputs["fleet-#{key.join('-')}"] = r
  end
end

Dir[File.join(dir, '*.{json,yaml}.gz')].each { |f| File.delete(f) }
inputs.each do |name, data|
  report = Puppet::Transaction::Report.from_data_hash(data)
  gzip_write(File.join(dir, "#{name}.json.gz"), JSON.generate(report.to_data_hash))
  gzip_write(File.join(dir, "#{name}.yaml.gz"), report.to_yaml)
end
puts "#{inputs.size} reports written to #{dir}"
