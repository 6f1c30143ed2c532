// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControlUpgradeable} from "@openzeppelin/contracts-upgradeable/access/AccessControlUpgradeable.sol";
import {Initializable} from "@openzeppelin/contracts-upgradeable/proxy/utils/Initializable.sol";
import {UUPSUpgradeable} from "@openzeppelin/contracts-upgradeable/proxy/utils/UUPSUpgradeable.sol";

/// @title OracleRegistry
/// @notice Anchors the revisions of the Standard Compute Unit (SCU) price index. Each revision is a header: its
/// number, the methodology that produced it, the SCU in USD with 18 decimals, and the hashes of its manifest. The
/// per-model prices live in the off-chain manifest whose keccak256(JCS(manifest)) is `metadataHash`.
/// @dev UUPS proxy (ERC-1967). Revisions are append-only, numbered from 1; the baseline is the SCU of revision 1.
contract OracleRegistry is Initializable, AccessControlUpgradeable, UUPSUpgradeable {
    bytes32 public constant PUBLISHER_ROLE = keccak256("PUBLISHER_ROLE");
    bytes32 public constant UPGRADER_ROLE = keccak256("UPGRADER_ROLE");

    struct RevisionHeader {
        uint256 revisionVersion;
        uint16 methodologyVersion;
        uint256 scuUsd;
        bytes32 contentHash;
        bytes32 metadataHash;
        uint64 publishedAt;
    }

    /// @dev revisions[i] is revision i + 1; publishedAt never decreases along the array.
    RevisionHeader[] private revisions;
    uint256 private baseline;

    event RevisionPublished(
        uint256 indexed revisionVersion,
        uint16 methodologyVersion,
        uint256 scuUsd,
        bytes32 contentHash,
        bytes32 indexed metadataHash,
        uint64 publishedAt
    );

    error RevisionOutOfOrder(uint256 expected, uint256 given);
    error InvalidScu();
    error InvalidMethodologyVersion();
    error NoRevision();
    error UnknownRevision(uint256 revisionVersion);
    error BeforeGenesis(uint256 timestamp);

    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        _disableInitializers();
    }

    function initialize(address admin, address publisher) external initializer {
        __AccessControl_init();
        __UUPSUpgradeable_init();
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(UPGRADER_ROLE, admin);
        _grantRole(PUBLISHER_ROLE, publisher);
    }

    /// @notice Implementation version; clients assert it before decoding tuples.
    function version() external pure virtual returns (string memory) {
        return "1.0.0";
    }

    function decimals() external pure returns (uint8) {
        return 18;
    }

    /// @notice Publishes the next revision. `publishedAt` is this block's timestamp.
    function publish(
        uint256 revisionVersion,
        uint16 methodologyVersion,
        uint256 scuUsd,
        bytes32 contentHash,
        bytes32 metadataHash
    ) external onlyRole(PUBLISHER_ROLE) returns (uint64 publishedAt) {
        uint256 expected = revisions.length + 1;
        if (revisionVersion != expected) revert RevisionOutOfOrder(expected, revisionVersion);
        if (scuUsd == 0) revert InvalidScu();
        if (methodologyVersion == 0) revert InvalidMethodologyVersion();
        publishedAt = uint64(block.timestamp);
        revisions.push(RevisionHeader(revisionVersion, methodologyVersion, scuUsd, contentHash, metadataHash, publishedAt));
        if (revisionVersion == 1) baseline = scuUsd;
        emit RevisionPublished(revisionVersion, methodologyVersion, scuUsd, contentHash, metadataHash, publishedAt);
    }

    function lastRevisionVersion() external view returns (uint256) {
        return revisions.length;
    }

    function getLatestRevision()
        external
        view
        returns (
            uint256 revisionVersion,
            uint16 methodologyVersion,
            uint256 scuUsd,
            bytes32 contentHash,
            bytes32 metadataHash,
            uint64 publishedAt
        )
    {
        if (revisions.length == 0) revert NoRevision();
        return _unpack(revisions[revisions.length - 1]);
    }

    function getRevision(uint256 revisionVersion_)
        external
        view
        returns (
            uint256 revisionVersion,
            uint16 methodologyVersion,
            uint256 scuUsd,
            bytes32 contentHash,
            bytes32 metadataHash,
            uint64 publishedAt
        )
    {
        return _unpack(_revision(revisionVersion_));
    }

    function getRevisionScuUsd(uint256 revisionVersion) external view returns (uint256) {
        return _revision(revisionVersion).scuUsd;
    }

    /// @notice The SCU of revision 1, frozen once published.
    function getBaseline() external view returns (uint256) {
        if (revisions.length == 0) revert NoRevision();
        return baseline;
    }

    /// @notice (baseline / latest SCU) x 100, with 18 decimals.
    function getComputeIndex() external view returns (uint256) {
        if (revisions.length == 0) revert NoRevision();
        return _index(revisions[revisions.length - 1].scuUsd);
    }

    /// @notice The revision in force at `timestamp`: the latest with publishedAt <= timestamp (on equal
    /// publishedAt, the highest revisionVersion).
    function getRevisionAt(uint256 timestamp)
        external
        view
        returns (
            uint256 revisionVersion,
            uint16 methodologyVersion,
            uint256 scuUsd,
            bytes32 contentHash,
            bytes32 metadataHash,
            uint64 publishedAt
        )
    {
        return _unpack(_revisionAt(timestamp));
    }

    function getComputeIndexAt(uint256 timestamp)
        external
        view
        returns (uint256 scuUsd, uint256 indexValue, uint64 publishedAt, uint16 methodologyVersion, uint256 revisionVersion)
    {
        RevisionHeader storage r = _revisionAt(timestamp);
        return (r.scuUsd, _index(r.scuUsd), r.publishedAt, r.methodologyVersion, r.revisionVersion);
    }

    function _revision(uint256 revisionVersion) private view returns (RevisionHeader storage) {
        if (revisionVersion == 0 || revisionVersion > revisions.length) revert UnknownRevision(revisionVersion);
        return revisions[revisionVersion - 1];
    }

    /// @dev Binary search for the last revision with publishedAt <= timestamp.
    function _revisionAt(uint256 timestamp) private view returns (RevisionHeader storage) {
        uint256 low = 0;
        uint256 high = revisions.length;
        while (low < high) {
            uint256 mid = (low + high) / 2;
            if (revisions[mid].publishedAt <= timestamp) low = mid + 1;
            else high = mid;
        }
        if (low == 0) revert BeforeGenesis(timestamp);
        return revisions[low - 1];
    }

    function _index(uint256 scuUsd) private view returns (uint256) {
        return (baseline * 100 * 1e18) / scuUsd;
    }

    function _unpack(RevisionHeader storage r)
        private
        view
        returns (uint256, uint16, uint256, bytes32, bytes32, uint64)
    {
        return (r.revisionVersion, r.methodologyVersion, r.scuUsd, r.contentHash, r.metadataHash, r.publishedAt);
    }

    function _authorizeUpgrade(address) internal override onlyRole(UPGRADER_ROLE) {}

    /// @dev Room for later versions' storage.
    uint256[48] private __gap;
}
