"""ROS 2 message and service classes for both back ends, and helpers that make node code identical on both.

On the standalone (``dds``) back end the classes are *generated* at run time from the ROS 2 message definitions
that ``rosbags`` ships for each distribution (its typestores): every ``pkg/msg/Name`` becomes a final
``cyclonedds`` :class:`~cyclonedds.idl.IdlStruct` named ``pkg::msg::dds_::Name_`` whose fields have exactly the
ROS 2 order and types, so the samples are plain CDR (XCDR1) that ``rmw_cyclonedds_cpp`` reads. Nested types,
fixed arrays, bounded and unbounded sequences, strings and ``builtin_interfaces/Time`` follow the definition.
Constants become class attributes, as in rclpy (``Marker.SPHERE``, ``DiagnosticStatus.WARN``).

``rosbags`` does not ship service definitions; the three ``std_srvs`` services the nodes use and the six
``rcl_interfaces`` parameter services are given below in ``.srv`` syntax (their definitions are fixed by ROS 2) and
parsed with the same ``rosbags`` parser. Nor does it ship ``control_msgs`` (ros2_control's messages): the two the
nodes use, ``DynamicJointState`` and ``InterfaceValue``, are given below in ``.msg`` syntax (:data:`CONTROL_MSGS`,
the same in Humble and Jazzy).

On the ``rclpy`` back end :class:`MessageTypes` resolves the same names by importing the ROS 2 Python packages
(``sensor_msgs.msg``), so node code written as ``types.sensor_msgs.msg.JointState(...)`` runs unchanged on both.

Field values on the two back ends: rclpy stores numeric sequences as ``array.array`` and checks element types
unless Python runs with ``-O``; it refuses numpy arrays. Build numeric sequences with :func:`float_sequence`
(an ``array.array('d')``, accepted by both) and read them with :func:`as_array` (a float64 numpy array).
``byte`` fields (``DiagnosticStatus.level``) are ``bytes`` on rclpy and ``int`` here: always assign the class
constants (``DiagnosticStatus.OK``), never literals.
"""
from __future__ import annotations

import array
import dataclasses
import functools
import hashlib
import importlib
import importlib.metadata
import json
import os
import tempfile
import threading
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from flexrobot_ros.cache import cache_dir
from flexrobot_ros.errors import RuntimeLayerError

#: ROS 2 distributions whose message definitions the standalone runtime can use, and the rosbags typestore of each.
DISTROS: tuple[str, ...] = ("jazzy", "humble")

#: Definitions of the ``std_srvs`` services in ROS 2 ``.srv`` syntax (request, response). rosbags ships messages only.
STD_SRVS: Mapping[str, tuple[str, str]] = {
    "std_srvs/srv/Empty": ("", ""),
    "std_srvs/srv/SetBool": ("bool data", "bool success\nstring message"),
    "std_srvs/srv/Trigger": ("", "bool success\nstring message"),
}

#: The rcl_interfaces parameter services every ROS 2 node serves (rcl_interfaces/srv/*.srv, comments dropped; the
#: same in Humble and Jazzy). Relative type names are rcl_interfaces messages, which rosbags ships.
PARAMETER_SRVS: Mapping[str, tuple[str, str]] = {
    "rcl_interfaces/srv/DescribeParameters": ("string[] names", "ParameterDescriptor[] descriptors"),
    "rcl_interfaces/srv/GetParameterTypes": ("string[] names", "uint8[] types"),
    "rcl_interfaces/srv/GetParameters": ("string[] names", "ParameterValue[] values"),
    "rcl_interfaces/srv/ListParameters": ("uint64 DEPTH_RECURSIVE=0\nstring[] prefixes\nuint64 depth",
                                          "ListParametersResult result"),
    "rcl_interfaces/srv/SetParameters": ("Parameter[] parameters", "SetParametersResult[] results"),
    "rcl_interfaces/srv/SetParametersAtomically": ("Parameter[] parameters", "SetParametersResult result"),
}

#: Definitions of the ``control_msgs`` messages the nodes use (ros-controls/control_msgs ``msg/*.msg``, comments
#: dropped; the same in Humble and Jazzy): what ros2_control's joint_state_broadcaster publishes on
#: ``/dynamic_joint_states``. rosbags ships no control_msgs.
CONTROL_MSGS: Mapping[str, str] = {
    "control_msgs/msg/InterfaceValue": "string[] interface_names\nfloat64[] values",
    "control_msgs/msg/DynamicJointState": "std_msgs/Header header\nstring[] joint_names\n"
                                          "InterfaceValue[] interface_values",
}

#: Every service definition the standalone runtime knows.
SERVICES: Mapping[str, tuple[str, str]] = {**STD_SRVS, **PARAMETER_SRVS}


def default_distro() -> str:
    """The ROS 2 distribution to follow: ``$ROS_DISTRO`` when it names a supported one, else ``jazzy``."""
    distro = os.environ.get("ROS_DISTRO", "jazzy").strip().lower()
    return distro if distro in DISTROS else "jazzy"


@functools.lru_cache(maxsize=None)
def typestore(distro: str = "jazzy") -> Any:
    """The rosbags typestore of ``distro`` with the :data:`CONTROL_MSGS` messages and the services' request/response
    (and, on Jazzy, event) types added.

    Raises:
        RuntimeLayerError: ``distro`` is not one of :data:`DISTROS`.
    """
    from rosbags.interfaces import Nodetype
    from rosbags.typesys import Stores, get_typestore, get_types_from_msg

    _check_distro(distro)
    store = get_typestore({"jazzy": Stores.ROS2_JAZZY, "humble": Stores.ROS2_HUMBLE}[distro])
    _char_as_uint8(store)
    for name, text in CONTROL_MSGS.items():
        store.register(get_types_from_msg(text, name))
    with_events = "service_msgs/msg/ServiceEventInfo" in store.fielddefs
    for srv, texts in SERVICES.items():
        request, response, event = f"{srv}_Request", f"{srv}_Response", f"{srv}_Event"
        types = {}
        for name, text in zip((request, response), texts):
            # rosbags resolves relative names wrongly in a 'pkg/srv/...' name: parse as a message of the package
            (definition,) = get_types_from_msg(text, f"{split_type_name(srv)[0]}/msg/Part").values()
            types[name] = definition
        if with_events:  # the service's own type description (REP 2011), from which its RIHS01 hash is computed
            types[event] = ([], [("info", (Nodetype.NAME, "service_msgs/msg/ServiceEventInfo")),
                                 ("request", (Nodetype.SEQUENCE, ((Nodetype.NAME, request), 1))),
                                 ("response", (Nodetype.SEQUENCE, ((Nodetype.NAME, response), 1)))])
            types[srv] = ([], [("request_message", (Nodetype.NAME, request)),
                               ("response_message", (Nodetype.NAME, response)),
                               ("event_message", (Nodetype.NAME, event))])
        store.register(types)
    return store


def _check_distro(distro: str) -> None:
    if distro not in DISTROS:
        raise RuntimeLayerError(f"ROS distribution {distro!r} is not supported; expected one of {DISTROS}")


def _char_as_uint8(store: Any) -> None:
    """Type ``char`` fields as ``uint8``, as rosidl does (``char`` is an alias of ``uint8`` in ROS 2 IDL).

    rosbags keeps them as ``char`` in its type descriptions, which gives RIHS01 hashes ROS 2 does not compute for
    ``rmw_dds_common/msg/Gid``, ``std_msgs/msg/Char`` and ``service_msgs/msg/ServiceEventInfo`` (hence for every
    service). The wire format is the same (one octet).
    """
    from rosbags.interfaces import Nodetype

    def fixed(desc: Any) -> Any:
        kind, rest = desc
        if kind == Nodetype.BASE:
            return (kind, ("uint8", rest[1])) if rest[0] == "char" else desc
        if kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            return kind, (fixed(rest[0]), rest[1])
        return desc

    for name, (constants, fields) in list(store.fielddefs.items()):
        store.fielddefs[name] = (constants, [(field, fixed(desc)) for field, desc in fields])


@dataclasses.dataclass(frozen=True)
class TypeDefinitions:
    """What the generated classes and the endpoints' type hashes need of a distro's :func:`typestore`: the field
    definitions of every type (rosbags' ``fielddefs``: ``{name: (constants, fields)}``, as JSON gives them back:
    lists for tuples, ints for ``Nodetype``) and their RIHS01 hashes (``hashes`` empty on Humble, which predates type
    hashes: REP 2011)."""

    fielddefs: Mapping[str, Any]
    hashes: Mapping[str, str]


#: Layout version of the cached definitions (:func:`type_definitions`); part of the file's key.
DEFINITIONS_FORMAT = 1


@functools.lru_cache(maxsize=None)
def type_definitions(distro: str = "jazzy") -> TypeDefinitions:
    """The :class:`TypeDefinitions` of ``distro``, from ``ros_types_<distro>_<key>.json`` in the package's cache
    directory (:func:`flexrobot_ros.cache.cache_dir`), which the first process that needs them writes from
    :func:`typestore`; the key is a sha256 of the rosbags version, :data:`DEFINITIONS_FORMAT` and this module's own
    definitions (:data:`CONTROL_MSGS`, :data:`SERVICES`). Making the typestore builds a Python class for each of
    rosbags' types, 0.15 s of CPU at the start of every node process; the file takes about a millisecond to read.
    Without a writable cache directory every process makes the typestore.

    Raises:
        RuntimeLayerError: ``distro`` is not one of :data:`DISTROS`.
    """
    _check_distro(distro)
    key = hashlib.sha256(json.dumps([DEFINITIONS_FORMAT, importlib.metadata.version("rosbags"), CONTROL_MSGS,
                                     SERVICES], sort_keys=True).encode()).hexdigest()[:16]
    path = cache_dir() / f"ros_types_{distro}_{key}.json"
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
        return TypeDefinitions(cached["fielddefs"], cached["hashes"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    store = typestore(distro)
    with_hashes = "service_msgs/msg/ServiceEventInfo" in store.fielddefs  # Humble predates type hashes (REP 2011)
    text = json.dumps({"fielddefs": store.fielddefs,
                       "hashes": {name: store.hash_rihs01(name) for name in store.fielddefs} if with_hashes else {}})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False, encoding="utf-8") as out:
            out.write(text)
        os.replace(out.name, path)
    except OSError:
        pass
    cached = json.loads(text)
    return TypeDefinitions(cached["fielddefs"], cached["hashes"])


def type_hash(typename: str, distro: str = "jazzy") -> str | None:
    """The RIHS01 type hash of a message or service type (``RIHS01_<64 hex>``), None where the distro has none.

    Humble predates type hashes (REP 2011), so its endpoints carry none.

    Raises:
        RuntimeLayerError: a type name the distro's definitions do not have.
    """
    definitions = type_definitions(distro)
    if not definitions.hashes:
        return None
    if typename not in definitions.hashes:
        raise RuntimeLayerError(f"type {typename!r} is not among the ROS 2 {distro} definitions of the standalone "
                                "runtime")
    return definitions.hashes[typename]


def dds_type_name(typename: str) -> str:
    """DDS type name of a ROS 2 type: ``sensor_msgs/msg/JointState`` -> ``sensor_msgs::msg::dds_::JointState_``."""
    package, kind, name = split_type_name(typename)
    return f"{package}::{kind}::dds_::{name}_"


def ros_type_name(dds_name: str) -> str | None:
    """Inverse of :func:`dds_type_name`; None for names that do not follow the ROS 2 convention."""
    parts = dds_name.split("::")
    if len(parts) != 4 or parts[2] != "dds_" or not parts[3].endswith("_"):
        return None
    return f"{parts[0]}/{parts[1]}/{parts[3][:-1]}"


def split_type_name(typename: str) -> tuple[str, str, str]:
    """``pkg/msg/Name`` -> (pkg, msg, Name); ``pkg/Name`` is read as a message.

    Raises:
        RuntimeLayerError: the name is not of that form.
    """
    parts = typename.split("/")
    if len(parts) == 2:
        parts = [parts[0], "msg", parts[1]]
    if len(parts) != 3 or parts[1] not in ("msg", "srv") or not all(parts):
        raise RuntimeLayerError(f"type name {typename!r} is not of the form 'package/msg/Name' or 'package/srv/Name'")
    return parts[0], parts[1], parts[2]


def type_name_of(cls: Any) -> str:
    """ROS 2 type name (``pkg/msg/Name``) of a message or service class of either back end or of rosbags."""
    name = getattr(cls, "__msgtype__", None) or getattr(cls, "__srvtype__", None)
    if name:
        return name
    module = getattr(cls, "__module__", "")  # rclpy: sensor_msgs.msg._joint_state.JointState
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in ("msg", "srv"):
        return f"{parts[0]}/{parts[1]}/{cls.__name__}"
    raise RuntimeLayerError(f"{cls!r} is not a ROS 2 message or service class")


# --------------------------------------------------------------------------------------------------------------
# Generated cyclonedds classes
# --------------------------------------------------------------------------------------------------------------

class ServiceType:
    """A generated service type, shaped like rclpy's: ``Trigger.Request``, ``Trigger.Response``.

    ``wire_request`` / ``wire_response`` are the DDS sample types of ``rq/<name>Request`` / ``rr/<name>Reply``:
    the rmw_cyclonedds request header (``uint64 client_guid``, ``int64 sequence_number``) followed by the fields.
    """

    __srvtype__: str
    Request: type
    Response: type
    wire_request: type
    wire_response: type


class _Generator:
    """Builds (once per distro and type) the cyclonedds classes of ROS 2 types from a rosbags typestore's
    definitions (:func:`type_definitions`)."""

    def __init__(self, distro: str) -> None:
        self.distro = distro
        self.fielddefs = type_definitions(distro).fielddefs
        self.classes: dict[str, Any] = {}
        self.lock = threading.RLock()

    def message(self, typename: str) -> type:
        with self.lock:
            if typename not in self.classes:
                if typename not in self.fielddefs:
                    raise RuntimeLayerError(
                        f"message type {typename!r} is not among the ROS 2 {self.distro} definitions shipped with "
                        "rosbags")
                constants, fields = self.fielddefs[typename]
                self.classes[typename] = self._struct(typename, dds_type_name(typename), fields, constants)
            return self.classes[typename]

    def service(self, typename: str) -> ServiceType:
        with self.lock:
            if typename not in self.classes:
                if f"{typename}_Request" not in self.fielddefs:
                    raise RuntimeLayerError(
                        f"service type {typename!r} is unknown; the standalone runtime knows {sorted(SERVICES)}")
                from rosbags.interfaces import Nodetype

                package, _, name = split_type_name(typename)
                header = [("client_guid", (Nodetype.BASE, ("uint64", 0))),
                          ("sequence_number", (Nodetype.BASE, ("int64", 0)))]
                attributes: dict[str, Any] = {"__srvtype__": typename}
                for part, key in (("Request", "wire_request"), ("Response", "wire_response")):
                    constants, fields = self.fielddefs[f"{typename}_{part}"]
                    fields = fields or [("structure_needs_at_least_one_member", (Nodetype.BASE, ("uint8", 0)))]
                    dds_name = f"{package}::srv::dds_::{name}_{part}_"
                    attributes[part] = self._struct(f"{typename}_{part}", dds_name, fields, constants)
                    wire = header + list(fields)
                    attributes[key] = self._struct(f"{typename}_{part}", dds_name, wire, constants, wire=True)
                self.classes[typename] = type(name, (ServiceType,), attributes)
            return self.classes[typename]

    def _struct(self, typename: str, dds_name: str, fields: Sequence[tuple[str, Any]], constants: Sequence[Any],
                wire: bool = False) -> type:
        from cyclonedds.idl import IdlMeta, IdlStruct

        name = typename.rsplit("/", 1)[1]
        namespace = IdlMeta.__prepare__(name, (IdlStruct,), typename=dds_name)
        for field, desc in fields:
            annotation, factory = self._field(desc)
            namespace["__annotations__"][field] = annotation
            namespace[field] = dataclasses.field(default_factory=factory)
        for constant, base, value in constants:
            namespace[constant] = value
        namespace["__msgtype__"] = typename
        namespace["__module__"] = f"flexrobot_ros.runtime.generated.{self.distro}"
        namespace["__qualname__"] = f"{name}_wire" if wire else name
        cls = IdlMeta(name, (IdlStruct,), namespace)
        return dataclasses.dataclass(cls)

    def _field(self, desc: Any) -> tuple[Any, Callable[[], Any]]:
        """(cyclonedds annotation, default factory) of a rosbags field description."""
        from cyclonedds.idl import types as t
        from rosbags.interfaces import Nodetype

        kind, rest = desc
        if kind == Nodetype.BASE:
            base, bound = rest
            if base == "string":
                return (t.bounded_str[bound] if bound else str), str
            scalars = {
                "bool": (bool, bool), "byte": (t.byte, int), "char": (t.uint8, int),
                "int8": (t.int8, int), "uint8": (t.uint8, int), "int16": (t.int16, int), "uint16": (t.uint16, int),
                "int32": (t.int32, int), "uint32": (t.uint32, int), "int64": (t.int64, int),
                "uint64": (t.uint64, int), "float32": (t.float32, float), "float64": (t.float64, float),
            }
            if base not in scalars:
                raise RuntimeLayerError(f"field type {base!r} is not supported by the standalone runtime")
            return scalars[base]
        if kind == Nodetype.NAME:
            cls = self.message(rest)
            return cls, cls
        sub, size = rest
        annotation, factory = self._field(sub)
        if kind == Nodetype.ARRAY:
            return t.array[annotation, size], lambda: [factory() for _ in range(size)]
        if kind == Nodetype.SEQUENCE:
            return (t.sequence[annotation, size] if size else t.sequence[annotation]), list
        raise RuntimeLayerError(f"field kind {kind!r} is not supported by the standalone runtime")


@functools.lru_cache(maxsize=None)
def _generator(distro: str) -> _Generator:
    return _Generator(distro)


def generated_message(typename: str, distro: str = "jazzy") -> type:
    """The generated cyclonedds class of message ``pkg/msg/Name`` (built on first use, cached)."""
    return _generator(distro).message(typename)


def generated_service(typename: str, distro: str = "jazzy") -> ServiceType:
    """The generated service type of ``pkg/srv/Name`` (``.Request``, ``.Response``, wire types)."""
    return _generator(distro).service(typename)


# --------------------------------------------------------------------------------------------------------------
# The `types` namespace nodes use
# --------------------------------------------------------------------------------------------------------------

class MessageTypes:
    """Attribute-style access to message and service classes: ``types.sensor_msgs.msg.JointState``.

    The same expression gives rclpy's class on the rclpy back end and the generated class on the dds back end;
    ``types.get("sensor_msgs/msg/JointState")`` is the string form.
    """

    def __init__(self, resolve: Callable[[str], Any], backend: str) -> None:
        self._resolve = resolve
        self._classes: dict[str, Any] = {}
        self.backend = backend

    def get(self, typename: str) -> Any:
        """The class of ``pkg/msg/Name`` or ``pkg/srv/Name`` (resolved once: nodes name types per message).

        Raises:
            RuntimeLayerError: the type does not exist on this back end.
        """
        cls = self._classes.get(typename)
        if cls is None:
            split_type_name(typename)
            cls = self._classes[typename] = self._resolve(typename)
        return cls

    def __getattr__(self, package: str) -> "_Package":
        if package.startswith("_"):
            raise AttributeError(package)
        value = _Package(self, package)
        setattr(self, package, value)  # found as a plain attribute from now on
        return value

    def __repr__(self) -> str:
        return f"MessageTypes(backend={self.backend!r})"


class _Package:
    def __init__(self, types: MessageTypes, package: str) -> None:
        self._types, self._package = types, package

    def __getattr__(self, kind: str) -> "_Module":
        if kind not in ("msg", "srv"):
            raise AttributeError(f"{self._package}.{kind}: expected 'msg' or 'srv'")
        value = _Module(self._types, self._package, kind)
        setattr(self, kind, value)
        return value


class _Module:
    def __init__(self, types: MessageTypes, package: str, kind: str) -> None:
        self._types, self._prefix = types, f"{package}/{kind}/"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        value = self._types.get(self._prefix + name)
        setattr(self, name, value)
        return value


def dds_message_types(distro: str | None = None) -> MessageTypes:
    """The namespace of generated classes for ``distro`` (default :func:`default_distro`)."""
    distro = distro or default_distro()

    def resolve(typename: str) -> Any:
        kind = split_type_name(typename)[1]
        return generated_service(typename, distro) if kind == "srv" else generated_message(typename, distro)

    return MessageTypes(resolve, "dds")


def _standalone_has(typename: str) -> bool:
    """Whether the standalone runtime has a definition of ``typename`` (for the hint of a missing rclpy type)."""
    try:
        dds_message_types().get(typename)
    except Exception:  # any failure means: do not promise it
        return False
    return True


def rclpy_message_types() -> MessageTypes:
    """The namespace of the ROS 2 installation's own Python message classes (``sensor_msgs.msg`` ...).

    A type whose package is not installed (a minimal ROS 2, e.g. rclpy from PyPI without control_msgs) raises a
    one-line RuntimeLayerError naming the package, what to install, and the standalone runtime where it has the
    definition."""

    def resolve(typename: str) -> Any:
        package, kind, name = split_type_name(typename)
        try:
            module = importlib.import_module(f"{package}.{kind}")
        except ImportError as error:
            alternative = (", or run this node on the standalone runtime (FLEXROBOT_RUNTIME=dds), which has its "
                           "definition" if _standalone_has(typename) else "")
            raise RuntimeLayerError(
                f"ROS 2 type {typename} needs the ROS 2 package {package}, which is not installed here ({error}): "
                f"install ros-<distro>-{package.replace('_', '-')} (apt install ros-$ROS_DISTRO-"
                f"{package.replace('_', '-')}) and source its setup file{alternative}") from error
        try:
            return getattr(module, name)
        except AttributeError as error:
            raise RuntimeLayerError(f"ROS 2 type {typename}: the installed package {package} has no {kind} {name} "
                                    f"(another version of {package}?)") from error

    return MessageTypes(resolve, "rclpy")


# --------------------------------------------------------------------------------------------------------------
# Conversions between messages and plain python / numpy data (both back ends, and rosbags' classes)
# --------------------------------------------------------------------------------------------------------------

def float_sequence(values: Iterable[float] | np.ndarray) -> array.array:
    """A float64[] field value accepted by both back ends (rclpy refuses numpy arrays): ``array.array('d')``.

    Raises:
        RuntimeLayerError: the values are not one-dimensional numbers.
    """
    data = np.asarray(values, dtype=np.float64)
    if data.ndim > 1:
        raise RuntimeLayerError(f"a float64 sequence must be one-dimensional, got shape {data.shape}")
    result = array.array("d")
    result.frombytes(np.ascontiguousarray(data.ravel()).tobytes())
    return result


def as_array(values: Any) -> np.ndarray:
    """A numeric sequence field (list, ``array.array``, numpy array) as a float64 numpy array."""
    if isinstance(values, array.array):
        return np.frombuffer(values, dtype=np.float64).copy() if values.typecode == "d" else np.asarray(values, float)
    return np.asarray(values, dtype=np.float64)


def time_message(types: MessageTypes, seconds: float) -> Any:
    """``builtin_interfaces/Time`` of a time in seconds (since the epoch for wall-clock stamps).

    A float holds epoch times to about 0.24 µs; that is the resolution of stamps made this way.
    """
    nanoseconds = int(round(seconds * 1e9))
    return types.builtin_interfaces.msg.Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def time_seconds(stamp: Any) -> float:
    """Seconds of a ``builtin_interfaces/Time`` (or Duration) message."""
    return stamp.sec + stamp.nanosec * 1e-9


def multiarray(types: MessageTypes, data: np.ndarray, labels: Sequence[str] | None = None) -> Any:
    """``std_msgs/Float64MultiArray`` of an n-dimensional array, row-major, with one labelled dimension per axis.

    ``labels`` name the axes (e.g. ``("mode", "joint")`` for mode shapes); default ``dim0, dim1, ...``.

    Raises:
        RuntimeLayerError: as many labels as axes are required.
    """
    values = np.asarray(data, dtype=np.float64)
    labels = list(labels) if labels is not None else [f"dim{i}" for i in range(values.ndim)]
    if len(labels) != values.ndim:
        raise RuntimeLayerError(f"multiarray labels {labels} do not match the array's {values.ndim} axes")
    std = types.std_msgs.msg
    strides = [int(np.prod(values.shape[i:])) for i in range(values.ndim)]
    dims = [std.MultiArrayDimension(label=label, size=int(size), stride=stride)
            for label, size, stride in zip(labels, values.shape, strides)]
    return std.Float64MultiArray(layout=std.MultiArrayLayout(dim=dims, data_offset=0), data=float_sequence(values.ravel()))


def multiarray_to_numpy(message: Any) -> tuple[np.ndarray, tuple[str, ...]]:
    """(array shaped by the layout, axis labels) of a ``Float64MultiArray``; a flat array when it has no layout.

    Raises:
        RuntimeLayerError: the layout does not match the number of values.
    """
    data = as_array(message.data)[int(message.layout.data_offset):]
    dims = list(message.layout.dim)
    if not dims:
        return data, ()
    shape = tuple(int(d.size) for d in dims)
    if int(np.prod(shape)) != data.size:
        raise RuntimeLayerError(f"Float64MultiArray layout {shape} does not match its {data.size} values")
    return data.reshape(shape), tuple(d.label for d in dims)


def message_fields(message: Any) -> list[str]:
    """Field names of a message of either back end (dataclass, rclpy, rosbags), in definition order."""
    if dataclasses.is_dataclass(message):  # rosbags declares constants as string-annotated ClassVars: skip them
        return [f.name for f in dataclasses.fields(message) if not str(f.type).startswith(("ClassVar", "typing.Cl"))]
    if hasattr(message, "get_fields_and_field_types"):  # rclpy
        return list(message.get_fields_and_field_types())
    raise RuntimeLayerError(f"{type(message).__name__} is not a ROS 2 message")


def message_to_dict(message: Any) -> Any:
    """A message as nested plain data (dicts, lists, numbers, strings): for JSON output and comparisons."""
    if dataclasses.is_dataclass(message) or hasattr(message, "get_fields_and_field_types"):
        return {name: message_to_dict(getattr(message, name)) for name in message_fields(message)}
    if isinstance(message, (bytes, bytearray)):
        return list(message)
    if isinstance(message, np.ndarray):
        return message.tolist()
    if isinstance(message, (list, tuple, array.array)):
        return [message_to_dict(item) for item in message]
    if isinstance(message, np.generic):
        return message.item()
    return message
