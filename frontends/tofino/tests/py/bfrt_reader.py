"""A reimplementation of the code paths by which bfrt_python reads LCMP's
table writes, after open-p4studio's pkgsrc/bf-drivers/src/bf_rt/bf_rt_python
(read to learn, rewritten here):

* bfrtcli.py `BFLeaf.add_from_json(entry_blob)`: `json.loads`, then for every
  entry `ent['table_name']` (checked against the table's name, printed only),
  `ent['key']`, `ent['data']`, `ent['action']` (a KeyError if absent), keys
  and data re-keyed to bytes, `parse_str_input("add_from_json", key, data,
  action)`, `add_entry(...)`; any exception is caught and printed as
  `Error: ...`, which ends the load;
* bfrtTable.py `BfRtTable.parse_str_input`: every key name through
  `self.key_fields[name].parse_input`, every data name through
  `self.actions[action]["data_fields"][name].parse_input`;
* bfrtTable.py `BfRtTableField.parse_input`: EXACT keys and UINT/BYTE_STREAM
  data with `_parse_int(value)`; LPM and RANGE keys with `_parse_int(value[0])`
  and `_parse_int(value[1])`, TERNARY with a mask; `_parse_int` accepts ints
  and strings (IPv4 dotted, MAC, `int(s, 0)`) and raises when
  `parsed >> size > 0`;
* bfrtcli.py `_make_core_method_strs` / `_create_add_with_action` /
  `_create_mod_with_action` / `_create_del`: the generated `add_with_<a>`,
  `mod_with_<a>` and `delete` methods, whose keyword arguments are the key
  names (`$` dropped), `<k>_p_length`, `<k>_start`/`<k>_end`, `<k>_mask`, then
  the action's data names, all defaulting to None (a missing argument parses
  as 0); no `add_with_`/`mod_with_` for `@defaultonly` actions.

Only the driver calls (`bf_rt_table_entry_add`, `_mod`, `_del`) are replaced,
by a dictionary of entries that refuses what BF-Runtime refuses: an add of a
present key, a modify or delete of an absent one. The table descriptions
(bf-rt.json's key and data fields, with `$MATCH_PRIORITY` for ternary and
range tables) are built from lcmp.p4 the way bf-p4c names them."""

import ipaddress
import json
import json as _json
import keyword


class BfRtTableError(Exception):
    pass


class Field:
    """bfrtTable.py BfRtTableField, for the types LCMP's tables use."""

    def __init__(self, name, size, category, key_type=None, required=True):
        self.name = name.encode("ascii")
        self.size = size
        self.category = category  # "key" or "data"
        self.key_type = key_type  # EXACT, LPM, RANGE, TERNARY
        self.required = required
        self.read_only = False

    def _parse_int(self, value, mask_type=False):
        if value is None:
            if not self.required:
                return True, None
            value = 0
            if mask_type:
                value = (1 << self.size) - 1
        if isinstance(value, str):
            if "." in value:
                try:
                    value = int(ipaddress.IPv4Address(value))
                except ValueError:
                    pass
        if isinstance(value, str) and (":" in value or "-" in value):
            try:
                value = int(value.replace("-", "").replace(":", ""), 16)
            except ValueError:
                pass
        try:
            parsed = int(value, 0) if isinstance(value, str) else int(value)
        except Exception as e:  # the real code prints and returns failure
            print("Error: {}".format(str(e)))
            return False, -1
        if mask_type and parsed < 0:
            parsed &= (1 << self.size) - 1
        if (parsed >> self.size) > 0:
            raise BfRtTableError(
                "Error: input {} (parsed: {}) for {} field {} is greater than {} bits.".format(
                    value, parsed, self.category, self.name, self.size
                )
            )
        return True, parsed

    def parse_input(self, method_name, value):
        if self.category == "data" or self.key_type == "EXACT":
            return self._parse_int(value)
        if self.key_type == "TERNARY":
            s0, p0 = True, 0
            s1, p1 = True, 0
            if value[0] is not None or value[1] is not None:
                s0, p0 = self._parse_int(value[0])
                s1, p1 = self._parse_int(value[1], mask_type=True)
            return (s0 and s1), [p0, p1]
        if self.key_type in ("RANGE", "LPM"):
            s0, p0 = self._parse_int(value[0])
            s1, p1 = self._parse_int(value[1])
            return (s0 and s1), [p0, p1]
        raise BfRtTableError("Error: type {} for key field {} not yet supported in the CLI.".format(
            self.key_type, self.name))


class Table:
    """bfrtTable.py BfRtTable (parse_str_input, add/mod/del_entry) and the
    bfrtcli.py leaf methods generated for it."""

    def __init__(self, name, key_fields, actions, default_only):
        self.name = name  # pipe.Control.table
        self.key_fields = {f.name: f for f in key_fields}
        self.actions = {
            a.encode("ascii"): {"data_fields": {f.name: f for f in fields}}
            for a, fields in actions.items()
        }
        self.default_only = {a.encode("ascii") for a in default_only}
        # Data fields of a table without actions (registers); none here.
        self.data_fields = {}
        self.entries = {}
        self.errors = []
        self._methods()

    # -- bfrtTable.py --
    def parse_str_input(self, method_name, key_strs, data_strs, action=None):
        parsed_keys = {}
        if key_strs is not None:
            for name, input_ in key_strs.items():
                if isinstance(name, str):
                    name = name.encode("UTF-8")
                success, parsed = self.key_fields[name].parse_input(method_name, input_)
                if not success:
                    print("ERROR: Can`t parse key in", method_name, "function. Invalid key:", input_)
                    return -1, {}
                parsed_keys[name] = parsed
        parsed_data = {}
        if data_strs is not None:
            data_fields = self.data_fields
            if action is not None:
                data_fields = self.actions[action]["data_fields"]
            for name, input_ in data_strs.items():
                if isinstance(name, str):
                    name = name.encode("UTF-8")
                success, parsed = data_fields[name].parse_input(method_name, input_)
                if not success:
                    print("ERROR: Can`t parse data in", method_name, "function. Invalid value:", input_)
                    return {}, -1
                parsed_data[name] = parsed
        return parsed_keys, parsed_data

    @staticmethod
    def _key(key_content):
        return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in key_content.items()))

    # The driver calls, as a dictionary.
    def add_entry(self, key_content, data_content, action=None):
        k = self._key(key_content)
        if k in self.entries:
            raise BfRtTableError("Error: table_entry_add failed on table {}. [Already exists]".format(self.name))
        self.entries[k] = (action, tuple(sorted(data_content.items())))

    def mod_entry(self, key_content, data_content, action=None, ttl_reset=True):
        k = self._key(key_content)
        if k not in self.entries:
            raise BfRtTableError("Error: table_entry_mod failed on table {}. [Object not found]".format(self.name))
        self.entries[k] = (action, tuple(sorted(data_content.items())))

    def del_entry(self, key_content, entry_handle=None):
        k = self._key(key_content)
        if k not in self.entries:
            raise BfRtTableError("Error: table_entry_del failed on table {}. [Object not found]".format(self.name))
        del self.entries[k]

    # -- bfrtcli.py --
    def dump(self, table=False, pipe=None, gress_dir=None, prsr_id=None, json=False,
             from_hw=False, return_ents=False, print_zero=True):
        """`dump(json=True)`: the entries as `add_from_json` reads them
        (TableEntryDumper.dump_json's fields: table_name, action, key, data)."""
        if not json:
            raise BfRtTableError("only dump(json=True) is reimplemented")
        out = []
        for k, (action, data) in self.entries.items():
            out.append({
                "table_name": self.name,
                "action": action.decode("ascii") if action is not None else None,
                "key": {n.decode("ascii"): list(v) if isinstance(v, tuple) else v for n, v in k},
                "data": {n.decode("ascii"): v for n, v in data},
            })
        return _json.dumps(out)

    def add_from_json(self, entry_blob):
        if isinstance(entry_blob, str):
            jents = json.loads(entry_blob)
            try:
                for ent in jents:
                    if not ent["table_name"] == self.name:
                        self._print("Error: table mismatch for entry {}.".format(ent))
                    skey = ent["key"]
                    sdata = ent["data"]
                    saction = ent["action"]
                    key = {}
                    data = {}
                    action = None
                    if saction is not None:
                        action = saction.encode("ascii")
                    for k, v in skey.items():
                        key[k.encode("ascii")] = v
                    for k, v in sdata.items():
                        data[k.encode("ascii")] = v
                    parsed_keys, parsed_data = self.parse_str_input("add_from_json", key, data, action)
                    if parsed_keys == -1:
                        return
                    if parsed_data == -1:
                        return
                    self.add_entry(parsed_keys, parsed_data, action)
            except Exception as e:
                self._print("Error: {}".format(str(e)))
        else:
            self._print("Input must be string produced by dump command for this table.")

    def _print(self, msg):
        print(msg)
        self.errors.append(msg)

    def _param_names(self, names, prefix):
        # _build_names at ridx 1: the last dotted part, `$` and friends
        # replaced; Python keywords get a prefix (validate_p4_entity_name).
        out = {}
        for n in names:
            p = n.decode("ascii")
            for x, y in [("$", ""), (" & ", "_"), ("-", "_"), (":", "_"), ("[", "_"), ("]", "_"), ("__", "_")]:
                p = p.replace(x, y)
            p = p[p.rfind(".") + 1 :]
            if keyword.iskeyword(p):
                p = prefix + p
            out[n] = p
        if len(set(out.values())) != len(out):
            raise BfRtTableError("parameter names collide: {}".format(out))
        return out

    def _method_parts(self, data_fields):
        knames = self._param_names(list(self.key_fields), "key_")
        dnames = self._param_names(list(data_fields), "data_")
        if set(knames.values()) & set(dnames.values()):
            raise BfRtTableError("key and data parameter names collide in {}".format(self.name))
        params, key_call, data_call = [], [], []
        for name, f in self.key_fields.items():
            p = knames[name]
            if f.key_type == "TERNARY":
                sub = [p, p + "_mask"]
            elif f.key_type == "RANGE":
                sub = [p + "_start", p + "_end"]
            elif f.key_type == "LPM":
                sub = [p, p + "_p_length"]
            else:
                sub = None
            if sub:
                params += sub
                key_call.append("{!r}: [{}, {}]".format(name, sub[0], sub[1]))
            else:
                params.append(p)
                key_call.append("{!r}: {}".format(name, p))
        for name in data_fields:
            params.append(dnames[name])
            data_call.append("{!r}: {}".format(name, dnames[name]))
        param_str = "".join("{}=None, ".format(p) for p in params)
        return param_str, "{" + ", ".join(key_call) + "}", "{" + ", ".join(data_call) + "}"

    def _methods(self):
        # _create_del, then per action (not @defaultonly) mod_with_ / add_with_.
        param_str, key_call, _ = self._method_parts({})
        self._define(
            "delete",
            "def delete(self, {}pipe=None, gress_dir=None, prsr_id=None, handle=None):\n"
            "    parsed_keys, _ = self.parse_str_input('delete', {}, {{}})\n"
            "    if parsed_keys == -1:\n        return\n"
            "    self.del_entry(parsed_keys, entry_handle=handle)\n".format(param_str, key_call),
        )
        for action, info in self.actions.items():
            if action in self.default_only:
                continue
            short = action.decode("ascii")
            short = short[short.rfind(".") + 1 :].replace("$", "")
            param_str, key_call, data_call = self._method_parts(info["data_fields"])
            for verb, call in [("add", "add_entry"), ("mod", "mod_entry")]:
                name = "{}_with_{}".format(verb, short)
                self._define(
                    name,
                    "def {}(self, {}pipe=None, gress_dir=None, prsr_id=None):\n"
                    "    parsed_keys, parsed_data = self.parse_str_input({!r}, {}, {}, {!r})\n"
                    "    if parsed_keys == -1:\n        return\n"
                    "    if parsed_data == -1:\n        return\n"
                    "    self.{}(parsed_keys, parsed_data, {!r})\n".format(
                        name, param_str, name, key_call, data_call, action, call, action
                    ),
                )

    def _define(self, name, code):
        d = {}
        exec(code, {}, d)
        setattr(self, name, d[name].__get__(self))


class RegisterParam:
    """A `RegisterParam` as bf-rt.json describes one (bf-p4c
    `BFRuntimeSchemaGenerator::addRegisterParam`): a keyless table with one
    data field, `value`, written as its default entry. `entries` holds that
    entry once written, so `snapshot` compares it too."""

    def __init__(self, name, bits):
        self.name = name
        self.value = Field("value", bits, "data")
        self.entries = {}
        self.errors = []

    def set_default(self, value, pipe=None):
        ok, v = self.value.parse_input("set_default", value)
        if not ok:
            raise BfRtTableError("{}: bad value {!r}".format(self.name, value))
        self.entries[()] = ("$DEFAULT", (("value", v),))

    def get_default(self, pipe=None):
        return self.entries.get((), (None, ()))


class Meter:
    """An indirect `Meter` as bf-rt.json describes one: key `$METER_INDEX`,
    data `$METER_SPEC_{CIR,PIR}_PPS` and `$METER_SPEC_{CBS,PBS}_PKTS` for a
    packet meter; bfrt_python's `mod` takes them without the `$`."""

    SPEC = ("CIR_PPS", "PIR_PPS", "CBS_PKTS", "PBS_PKTS")

    def __init__(self, name, size):
        self.name = name
        self.index = Field("$METER_INDEX", max(1, (size - 1).bit_length()), "key", "EXACT")
        self.data = {s: Field("$METER_SPEC_" + s, 64, "data") for s in self.SPEC}
        self.entries = {}
        self.errors = []

    def mod(self, METER_INDEX=None, pipe=None, **spec):
        ok, i = self.index.parse_input("mod", METER_INDEX)
        if not ok:
            raise BfRtTableError("{}: bad index {!r}".format(self.name, METER_INDEX))
        data = []
        for s in self.SPEC:
            if "METER_SPEC_" + s not in spec:
                raise BfRtTableError("{}: no METER_SPEC_{}".format(self.name, s))
            ok, v = self.data[s].parse_input("mod", spec.pop("METER_SPEC_" + s))
            data.append((s, v))
        if spec:
            raise BfRtTableError("{}: unknown fields {}".format(self.name, sorted(spec)))
        self.entries[(i,)] = ("$METER", tuple(data))


class Counter:
    """An indirect `Counter` as bf-rt.json describes one: key
    `$COUNTER_INDEX`, data `$COUNTER_SPEC_BYTES` and `$COUNTER_SPEC_PKTS`
    (packets and bytes). `get` returns an entry whose `data` holds them,
    as bfrt_python's `get(..., print_ents=False)` does; `cells` is what
    the data plane counted (index -> (packets, bytes)), which a test sets."""

    def __init__(self, name, size):
        self.name = name
        self.index = Field("$COUNTER_INDEX", max(1, (size - 1).bit_length()), "key", "EXACT")
        self.cells = {}
        self.entries = {}
        self.errors = []

    def get(self, COUNTER_INDEX=None, from_hw=False, print_ents=True, pipe=None):
        ok, i = self.index.parse_input("get", COUNTER_INDEX)
        if not ok:
            raise BfRtTableError("{}: bad index {!r}".format(self.name, COUNTER_INDEX))
        pkts, nbytes = self.cells.get(i, (0, 0))

        class Entry:
            data = {b"$COUNTER_SPEC_PKTS": pkts, b"$COUNTER_SPEC_BYTES": nbytes}

        return Entry()


class Node:
    def __init__(self, what, children):
        self._what, self._children = what, children

    def __getattr__(self, attr):
        try:
            return self._children[attr]
        except KeyError:
            raise AttributeError("{} has no {}".format(self._what, attr)) from None


def make_bfrt(decls, program="lcmp"):
    """A `bfrt` object with the LCMP tables of `decls` (p4names.parse)."""
    tables = {}
    controls = {}
    for ctl, d in decls.items():
        children = {}
        for t, td in d["tables"].items():
            keys = [
                Field(k, kd["bits"], "key", kd["kind"].upper()) for k, kd in td["keys"].items()
            ]
            if any(kd["kind"] in ("range", "ternary") for kd in td["keys"].values()):
                keys.append(Field("$MATCH_PRIORITY", 32, "key", "EXACT"))
            actions = {}
            for a in td["actions"] + td["default_only"]:
                actions["{}.{}".format(ctl, a)] = [
                    Field(p, bits, "data") for p, bits in d["actions"][a].items()
                ]
            default_only = ["{}.{}".format(ctl, a) for a in td["default_only"]]
            table = Table("pipe.{}.{}".format(ctl, t), keys, actions, default_only)
            children[t] = table
            tables[table.name] = table
        for prm, pd in d.get("params", {}).items():
            param = RegisterParam("pipe.{}.{}".format(ctl, prm), pd["bits"])
            children[prm] = param
            tables[param.name] = param
        for c, cd in d.get("counters", {}).items():
            counter = Counter("pipe.{}.{}".format(ctl, c), cd["size"])
            children[c] = counter
            tables[counter.name] = counter
        for m, md in d.get("meters", {}).items():
            meter = Meter("pipe.{}.{}".format(ctl, m), md["size"])
            children[m] = meter
            tables[meter.name] = meter
        controls[ctl] = Node(ctl, children)
    pipe = Node("pipe", controls)

    class Bfrt(Node):
        def complete_operations(self):
            pass

    return Bfrt("bfrt", {program: Node(program, {"pipe": pipe})}), tables


def snapshot(tables):
    """Every installed entry: (table, key, action, data), sorted."""
    return sorted(
        (name, k, a, d)
        for name, t in tables.items()
        if not isinstance(t, (RegisterParam, Meter, Counter))
        for k, (a, d) in t.entries.items()
    )


def meters(tables):
    """The meters configured: name -> {index: spec}."""
    return {
        name: dict(t.entries) for name, t in tables.items() if isinstance(t, Meter) and t.entries
    }


def params(tables):
    """The register parameters written: name -> value."""
    return {
        name: dict(t.entries[()][1])["value"]
        for name, t in tables.items()
        if isinstance(t, RegisterParam) and () in t.entries
    }
