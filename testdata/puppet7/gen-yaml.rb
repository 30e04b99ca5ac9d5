#!/usr/bin/env ruby
# Regenerates the YAML fixtures next to the Puppet report JSON files, with
# Puppet's own classes (Puppet 7.23 as installed by Debian's puppet-agent):
#
#   <name>.yaml        Report.from_data_hash(JSON).to_yaml: exactly what the
#                      `http` report processor POSTs and `store` writes
#                      (PsychSupport#encode_with: to_data_hash under the
#                      !ruby/object:Puppet::Transaction::Report tag)
#   <name>.ivars.yaml  the same report dumped by instance variables, every
#                      object tagged (Report, Resource::Status,
#                      Transaction::Event, Util::Log, Util::Metric,
#                      Util::TagSet), times as YAML timestamps, symbols as
#                      :name — the shape of Puppet 3 dumps — plus a few
#                      instance variables to_data_hash does not write
#   yaml/<name>.ruby.json  for the real YAML reports in yaml/: the report
#                      JSON (render(:json)) of what Psych loads from them
#
# Usage: ruby testdata/puppet7/gen-yaml.rb   (from anywhere; writes in place)
require 'json'
require 'tmpdir'
require 'puppet'

dir = File.expand_path(__dir__)
Dir.mktmpdir do |tmp|
  Puppet.initialize_settings(['--confdir', tmp, '--vardir', tmp, '--codedir', tmp,
                              '--logdir', tmp, '--rundir', tmp])
end

module IvarDump
  def encode_with(coder)
    instance_variables.each { |iv| coder[iv.to_s.delete_prefix('@')] = instance_variable_get(iv) }
  end
end

def load_report(path)
  Puppet::Transaction::Report.from_data_hash(JSON.parse(File.read(path)))
end

jsons = Dir[File.join(dir, '{format12,apply}', '*.json')].reject { |f| f.end_with?('.pdb-wire.json', 'run-info.json') }.sort
jsons.each do |path|
  File.write(path.sub(/\.json\z/, '.yaml'), load_report(path).to_yaml)
end

Dir[File.join(dir, 'yaml', '*.yaml')].sort.each do |path|
  report = YAML.unsafe_load(File.read(path)) # init_with -> initialize_from_hash
  raise "#{path}: not a report" unless report.is_a?(Puppet::Transaction::Report)
  File.write(path.sub(/\.yaml\z/, '.ruby.json'), report.render(:json))
end

IVARS = %w[apply/web01-run1.json apply/app01-run2.json]
[Puppet::Transaction::Report, Puppet::Resource::Status, Puppet::Util::Log, Puppet::Util::Metric].each do |k|
  k.prepend(IvarDump)
end
IVARS.each do |rel|
  path = File.join(dir, rel)
  report = load_report(path)
  # instance variables live objects carry that to_data_hash leaves out
  report.instance_variable_set(:@external_times, {})
  report.instance_variable_set(:@resources_failed_to_generate, false)
  report.resource_statuses.each_value do |st|
    st.instance_variable_set(:@source_description, "/#{st.resource}")
    st.events.each do |ev|
      ev.instance_variable_set(:@default_log_level, :notice)
      ev.instance_variable_set(:@source_description, "/#{st.resource}")
      ev.instance_variable_set(:@invalidate_refreshes, nil)
    end
  end
  File.write(path.sub(/\.json\z/, '.ivars.yaml'), report.to_yaml)
end
